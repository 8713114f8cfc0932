-- An SMS reply `ACK <code>` names its page by a keyed code (delivery/sms-ack-code.ts), found
-- among the recent SMS pages of the person whose number replied: those rows, by person.
create index if not exists alert_deliveries_sms_pages_idx
  on stega.alert_deliveries (page_agent_id, id)
  where channel = 'sms' and page_agent_id is not null;
