-- Personal notification rules (issue 25): an alert that pages a person (an escalation level's
-- agents) reaches them through their own rules, an ordered list of (method, delay) per
-- urgency, sent only to contact methods they verified. Each step is a ledger row of its own
-- (page_agent_id, page_step), scheduled for the paged instant plus its delay, so retries,
-- circuits, idempotency keys and acknowledgement cancel it as they do any delivery.

-- How an agent can be reached: an address per method, used only once verified.
create table stega.contact_methods (
  id bigint generated always as identity primary key,
  agent_id bigint not null references stega.agents (id) on delete cascade,
  method text not null check (method in ('email', 'sms', 'voice', 'push', 'slack_dm')),
  -- email: the address; sms, voice: an E.164 number; push: the subscription's endpoint URL;
  -- slack_dm: the Slack user id
  address text not null,
  -- push: the subscription's keys ({p256dh, auth}); null otherwise
  push_keys jsonb,
  label text,
  verified_at timestamptz,
  -- the SHA-256 of the pending verification code (sms, voice), its expiry and wrong tries
  verify_code_sha256 text,
  verify_expires_at timestamptz,
  verify_failures integer not null default 0,
  created_at timestamptz not null default now(),
  unique (agent_id, method, address)
);
-- An incoming SMS or call names its sender by number.
create index contact_methods_address_idx on stega.contact_methods (address)
  where method in ('sms', 'voice');

-- The steps of an agent's own rules (agent_id), or of a team's defaults (team_id), per urgency.
create table stega.notification_rules (
  id bigint generated always as identity primary key,
  agent_id bigint references stega.agents (id) on delete cascade,
  team_id bigint references stega.teams (id) on delete cascade,
  urgency text not null check (urgency in ('high', 'low')),
  position integer not null check (position >= 0),
  method text not null check (method in ('in_app', 'email', 'sms', 'voice', 'push', 'slack_dm')),
  delay_seconds integer not null check (delay_seconds between 0 and 86400),
  check ((agent_id is null) <> (team_id is null))
);
create unique index notification_rules_agent_idx
  on stega.notification_rules (agent_id, urgency, position) where agent_id is not null;
create unique index notification_rules_team_idx
  on stega.notification_rules (team_id, urgency, position) where team_id is not null;

-- Quiet hours for low-urgency alerts, in the agent's zone (start = end: none).
alter table stega.agents add column quiet_hours_start time;
alter table stega.agents add column quiet_hours_end time;

-- The ledger knows the new methods and which person's rule step a row is.
alter table stega.alert_deliveries drop constraint alert_deliveries_channel_check;
alter table stega.alert_deliveries add constraint alert_deliveries_channel_check
  check (channel in ('in_app', 'email', 'webhook', 'slack', 'teams', 'pagerduty',
                     'customer_email', 'sms', 'voice', 'push', 'slack_dm'));
alter table stega.alert_deliveries add column page_agent_id bigint;
alter table stega.alert_deliveries add column page_step integer;
create index alert_deliveries_page_idx
  on stega.alert_deliveries (alert_type, alert_id, page_agent_id, page_step)
  where page_agent_id is not null;

alter table stega.escalations drop constraint escalations_acknowledged_via_check;
alter table stega.escalations add constraint escalations_acknowledged_via_check
  check (acknowledged_via in ('app', 'api', 'email', 'chat', 'sms', 'voice', 'push', 'slack'));

-- What a provider reported of a delivery (queued, sent, delivered, failed, read), once each.
create table stega.delivery_receipts (
  id bigint generated always as identity primary key,
  delivery_id bigint not null references stega.alert_deliveries (id) on delete cascade,
  provider_id text,
  status text not null,
  reported_at timestamptz not null default now(),
  -- the callback's parameters as received
  raw jsonb not null,
  unique (delivery_id, status)
);

-- A step that failed for good pulls the next step of the same person forward to now.
create function stega.page_step_advance() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$ begin return null; end $$;
create trigger alert_deliveries_page_step_advance
  after update of status on stega.alert_deliveries
  for each row
  when (new.status = 'failed_permanent' and old.status <> 'failed_permanent'
        and new.page_agent_id is not null)
  execute function stega.page_step_advance();
