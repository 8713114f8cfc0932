-- A warning's lateness is measured from its warning instant; the alert row keeps the
-- instant it was detected for (null on rows recorded before this column).
alter table stega.sla_warnings add column warn_at timestamptz;

-- Scrape-time figures (/metrics, operations page): ledger rows still to deliver, and
-- recent alerts no worker has picked up yet.
create index alert_deliveries_undelivered_idx on stega.alert_deliveries (created_at)
  where status <> 'delivered';
create index sla_breaches_detected_at_idx on stega.sla_breaches (detected_at);
create index sla_warnings_detected_at_idx on stega.sla_warnings (detected_at);
