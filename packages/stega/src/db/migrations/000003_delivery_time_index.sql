-- The operations page charts deliveries per replica over a recent time range.
create index alert_deliveries_delivered_at_idx on stega.alert_deliveries (delivered_at)
  where delivered_at is not null;
