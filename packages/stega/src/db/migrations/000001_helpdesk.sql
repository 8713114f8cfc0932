-- Stega's own tables, in schema stega. The queue engine lives in schema pgque and the
-- job runner in graphile_worker; this schema holds the helpdesk.

create table stega.agents (
  id bigint generated always as identity primary key,
  name text not null,
  email text not null unique,
  created_at timestamptz not null default now()
);

-- Tokens are stored as SHA-256 hashes; the plain token is shown once at creation.
create table stega.api_tokens (
  id bigint generated always as identity primary key,
  name text not null,
  token_sha256 text not null unique,
  role text not null check (role in ('agent', 'admin')),
  agent_id bigint references stega.agents (id),
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

-- A business-hours calendar: weekly hours in its zone, holidays, or round the clock.
create table stega.calendars (
  id bigint generated always as identity primary key,
  name text not null unique,
  time_zone text not null,
  always_open boolean not null default false,
  weekly_hours jsonb not null default '{}',
  holidays jsonb not null default '[]',
  updated_at timestamptz not null default now()
);

-- Targets in business minutes of the calendar. A policy for a requester organisation
-- wins over the one for all organisations (requester_org null).
create table stega.sla_policies (
  id bigint generated always as identity primary key,
  name text not null,
  priority text not null check (priority in ('urgent', 'high', 'normal', 'low')),
  requester_org text,
  first_response_minutes int not null check (first_response_minutes > 0),
  resolution_minutes int not null check (resolution_minutes > 0),
  calendar_id bigint not null references stega.calendars (id),
  -- where alerts go: {"in_app": true, "email": ["a@x"], "webhooks": [{"url": "...", "secret": "..."}]}
  alert_channels jsonb not null default '{"in_app": true}',
  updated_at timestamptz not null default now()
);
create unique index sla_policies_scope_uq
  on stega.sla_policies (priority, coalesce(requester_org, ''));

create table stega.tickets (
  id bigint generated always as identity primary key,
  subject text not null,
  description text not null default '',
  requester_name text not null,
  requester_email text not null,
  requester_org text,
  assignee_id bigint references stega.agents (id),
  priority text not null check (priority in ('urgent', 'high', 'normal', 'low')),
  status text not null default 'open'
    check (status in ('open', 'in_progress', 'waiting', 'resolved', 'closed')),
  policy_id bigint references stega.sla_policies (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  first_responded_at timestamptz,
  resolved_at timestamptz,
  closed_at timestamptz
);
create index tickets_status_idx on stega.tickets (status);
create index tickets_assignee_idx on stega.tickets (assignee_id);

-- One clock per (ticket, kind). due_at is recomputed whenever the clock pauses, resumes
-- or restarts; breach detection reads it directly.
create table stega.sla_clocks (
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  kind text not null check (kind in ('first_response', 'resolution')),
  calendar_id bigint not null references stega.calendars (id),
  started_at timestamptz not null,
  target_minutes int not null,
  paused_business_minutes int not null default 0,
  paused_since timestamptz,
  stopped_at timestamptz,
  due_at timestamptz not null,
  warn_at timestamptz not null,
  primary key (ticket_id, kind)
);
create index sla_clocks_running_due_idx on stega.sla_clocks (due_at)
  where stopped_at is null and paused_since is null;
create index sla_clocks_running_warn_idx on stega.sla_clocks (warn_at)
  where stopped_at is null and paused_since is null;

create table stega.ticket_comments (
  id bigint generated always as identity primary key,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  author_agent_id bigint references stega.agents (id),
  author_name text not null,
  body text not null,
  public_reply boolean not null default true,
  created_at timestamptz not null default now()
);
create index ticket_comments_ticket_idx on stega.ticket_comments (ticket_id);

create table stega.ticket_activity (
  id bigint generated always as identity primary key,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  at timestamptz not null default now(),
  actor text not null,
  action text not null,
  details jsonb not null default '{}'
);
create index ticket_activity_ticket_idx on stega.ticket_activity (ticket_id, at);

-- Written in the same transaction as the queue event, unique per (ticket, kind, due time):
-- overlapping detector runs publish each breach once.
create table stega.sla_breaches (
  id bigint generated always as identity primary key,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  kind text not null check (kind in ('first_response', 'resolution')),
  due_at timestamptz not null,
  detected_at timestamptz not null,
  event_id bigint,
  unique (ticket_id, kind, due_at)
);

create table stega.sla_warnings (
  id bigint generated always as identity primary key,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  kind text not null check (kind in ('first_response', 'resolution')),
  due_at timestamptz not null,
  detected_at timestamptz not null,
  elapsed_share numeric not null,
  event_id bigint,
  unique (ticket_id, kind, due_at)
);

-- One row per (alert, channel, recipient): a redelivered event finds it and sends nothing.
create table stega.alert_deliveries (
  id bigint generated always as identity primary key,
  alert_type text not null check (alert_type in ('breach', 'warning')),
  alert_id bigint not null,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  channel text not null check (channel in ('in_app', 'email', 'webhook')),
  recipient text not null,
  status text not null check (status in ('pending', 'delivered', 'failed')),
  attempts int not null default 0,
  last_error text,
  delivered_at timestamptz,
  delivered_by text,
  batch_id bigint,
  event_id bigint,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (alert_type, alert_id, channel, recipient)
);
create index alert_deliveries_ticket_idx on stega.alert_deliveries (ticket_id);

-- In-app alerts shown to agents.
create table stega.alerts (
  id bigint generated always as identity primary key,
  alert_type text not null check (alert_type in ('breach', 'warning')),
  alert_id bigint not null,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  agent_id bigint references stega.agents (id),
  message text not null,
  created_at timestamptz not null default now(),
  read_at timestamptz,
  unique (alert_type, alert_id, agent_id)
);

create table stega.activity_reports (
  id bigint generated always as identity primary key,
  period_start timestamptz not null,
  period_end timestamptz not null,
  time_zone text not null,
  generated_at timestamptz not null default now(),
  data jsonb not null,
  event_id bigint,
  unique (period_start, period_end)
);

create table stega.report_deliveries (
  id bigint generated always as identity primary key,
  report_id bigint not null references stega.activity_reports (id) on delete cascade,
  channel text not null check (channel in ('email', 'webhook')),
  recipient text not null,
  status text not null check (status in ('pending', 'delivered', 'failed')),
  attempts int not null default 0,
  last_error text,
  delivered_at timestamptz,
  delivered_by text,
  updated_at timestamptz not null default now(),
  unique (report_id, channel, recipient)
);

-- Takeovers and other pipeline events worth showing operators.
create table stega.pipeline_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  kind text not null,
  subconsumer text,
  batch_id bigint,
  details jsonb not null default '{}'
);
create index pipeline_log_at_idx on stega.pipeline_log (at);
