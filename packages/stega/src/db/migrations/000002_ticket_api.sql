-- The SLA domain counts business time to the millisecond: paused minutes carry fractions.
alter table stega.sla_clocks
  alter column paused_business_minutes type double precision;

-- Ticket list filters and the breach listing.
create index tickets_priority_idx on stega.tickets (priority);
create index sla_breaches_ticket_idx on stega.sla_breaches (ticket_id);
create index sla_breaches_detected_idx on stega.sla_breaches (detected_at desc, id desc);
create index sla_warnings_ticket_idx on stega.sla_warnings (ticket_id);
create index alerts_agent_idx on stega.alerts (agent_id, created_at desc);
create index sla_policies_calendar_idx on stega.sla_policies (calendar_id);
create index api_tokens_agent_idx on stega.api_tokens (agent_id);
