-- Acknowledgements recorded in the last hour, whatever their recipient: a mailbox sends at
-- most INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR of them (mail/acknowledgement.ts), counted
-- over this index and the tickets it points to.
create index alert_deliveries_acknowledged_at_idx
  on stega.alert_deliveries (created_at)
  where alert_type = 'acknowledgement';
