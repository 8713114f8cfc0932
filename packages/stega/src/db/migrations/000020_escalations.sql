-- Escalation policies (issue 14): an SLA policy may name one; a breach of its tickets then
-- starts a chain that climbs the levels (each a delay after the breach and its targets)
-- until someone acknowledges it or the SLA is met.
create table stega.escalation_policies (
  id bigint generated always as identity primary key,
  name text not null unique,
  -- [{"delay_minutes": 0, "targets": {"assignee": true, "team": false, "team_lead": false,
  --   "agents": [3], "channels": {"email": [], "webhooks": [], ...}}}, ...], delays ascending
  levels jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

alter table stega.sla_policies
  add column escalation_policy_id bigint references stega.escalation_policies (id);
create index sla_policies_escalation_idx on stega.sla_policies (escalation_policy_id);

-- One chain per breach, keyed like the breach (ticket, kind, due_at). The levels are the
-- policy's as they were when the chain started: an edit later does not change it.
-- next_level / next_at: the level to fire next and its instant (due_at + its delay); null
-- when every level fired or the chain stopped.
create table stega.escalations (
  id bigint generated always as identity primary key,
  breach_id bigint not null unique references stega.sla_breaches (id) on delete cascade,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  kind text not null,
  due_at timestamptz not null,
  escalation_policy_id bigint references stega.escalation_policies (id) on delete set null,
  policy_name text not null,
  levels jsonb not null,
  started_at timestamptz not null,
  next_level int,
  next_at timestamptz,
  -- acknowledged, sla_met (the clock stopped in time or late: first reply, resolution),
  -- resolved (the ticket left open/in progress), waiting (paused on the customer),
  -- rescheduled (the clock's due instant moved: a new breach, a new chain)
  stopped_at timestamptz,
  stop_reason text check (stop_reason in ('acknowledged', 'sla_met', 'resolved', 'waiting',
                                          'rescheduled')),
  acknowledged_at timestamptz,
  acknowledged_by text,
  acknowledged_by_agent_id bigint references stega.agents (id) on delete set null,
  -- app (the web UI), api, email (the signed link), chat (a chat button's signed link)
  acknowledged_via text check (acknowledged_via in ('app', 'api', 'email', 'chat')),
  unique (ticket_id, kind, due_at)
);
create index escalations_next_idx on stega.escalations (next_at)
  where stopped_at is null and next_at is not null;
create index escalations_ticket_idx on stega.escalations (ticket_id);

-- One row per fired level, written with its ticket.sla_escalated event in one transaction:
-- a level fires once, however many runners overlap. `agents` are the level's agent targets
-- as resolved when it fired (assignee, team members, team lead, named agents).
create table stega.escalation_firings (
  id bigint generated always as identity primary key,
  escalation_id bigint not null references stega.escalations (id) on delete cascade,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  level int not null,
  fire_at timestamptz not null,
  fired_at timestamptz not null,
  agents jsonb not null default '[]',
  event_id bigint,
  unique (escalation_id, level)
);
create index escalation_firings_ticket_idx on stega.escalation_firings (ticket_id);

-- A fired level's deliveries are ledger rows of their own (alert_type 'escalation', alert_id
-- the firing), with the ledger's claims, retries and circuits.
alter table stega.alert_deliveries drop constraint alert_deliveries_alert_type_check;
alter table stega.alert_deliveries add constraint alert_deliveries_alert_type_check
  check (alert_type in ('breach', 'warning', 'escalation'));
alter table stega.alerts drop constraint alerts_alert_type_check;
alter table stega.alerts add constraint alerts_alert_type_check
  check (alert_type in ('breach', 'warning', 'escalation'));

-- The key acknowledgement links are signed with when STEGA_ACK_SECRET is not set: random,
-- made once here, shared by every process through the database, never shown by the API.
create table stega.server_secrets (
  name text primary key,
  secret text not null,
  created_at timestamptz not null default now()
);
insert into stega.server_secrets (name, secret)
values ('ack_link', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
