-- Alert deliveries carry their own retry state (issue 12): the queue batch is acked once
-- the rows are recorded, and any sla-breach-worker claims due rows, calls, records.
--   pending -> sending (claimed: claim_token, lease in next_attempt_at) -> delivered
--                                  \-> retrying (next_attempt_at) -> sending ...
--                                  \-> failed_permanent (a 404, a rejected recipient, past the horizon)
--   fallback rows: scheduled (next_attempt_at = the deadline) -> sending ... | cancelled
-- 'failed' is the state rows had before this migration; they are retried like 'retrying'.
alter table stega.alert_deliveries drop constraint alert_deliveries_status_check;
alter table stega.alert_deliveries add constraint alert_deliveries_status_check check (
  status in ('pending', 'sending', 'retrying', 'delivered', 'failed', 'failed_permanent',
             'scheduled', 'cancelled'));

alter table stega.alert_deliveries
  add column fallback boolean not null default false,
  -- the endpoint whose circuit the delivery shares (webhook URL, smtp server); null in-app
  add column endpoint text,
  add column next_attempt_at timestamptz,
  add column first_failed_at timestamptz,
  add column give_up_at timestamptz,
  -- delays between attempts, seconds (already scaled); the last one repeats
  add column retry_delays double precision[],
  add column claim_token uuid,
  add column last_attempt_at timestamptz,
  -- what the retry needs to send again: the event payload, and the webhook secret
  add column payload jsonb,
  add column secret text;

-- a fallback to an address the primary also mails is a delivery of its own
alter table stega.alert_deliveries
  drop constraint alert_deliveries_alert_type_alert_id_channel_recipient_key;
create unique index alert_deliveries_key_idx
  on stega.alert_deliveries (alert_type, alert_id, channel, recipient, fallback);

update stega.alert_deliveries set status = 'retrying', next_attempt_at = now()
 where status in ('failed', 'pending');

create index alert_deliveries_due_idx on stega.alert_deliveries (next_attempt_at)
  where status in ('pending', 'sending', 'retrying', 'failed', 'scheduled');

-- One circuit per endpoint: open after consecutive transient failures; while open its
-- deliveries wait, and one is let through as a probe at probe_at.
create table stega.delivery_endpoints (
  endpoint text primary key,
  state text not null default 'closed' check (state in ('closed', 'open')),
  consecutive_failures int not null default 0,
  opened_at timestamptz,
  probe_at timestamptz,
  last_error text,
  updated_at timestamptz not null default now()
);

-- The claiming worker's liveness session: a claim whose session is gone (the worker was
-- killed) may be taken at once; a live but frozen worker's claim only after its lease.
alter table stega.alert_deliveries
  add column claim_pid int,
  add column claim_backend_start timestamptz;
create index alert_deliveries_sending_idx on stega.alert_deliveries (claim_pid)
  where status = 'sending';
