-- On-call schedules (issue 25): who is on call for a team at any instant. A schedule has
-- ordered layers, each a rotation of agents; a later layer overrides earlier ones wherever it
-- has someone; overrides (someone covers [starts_at, ends_at)) override every layer. The
-- arithmetic (shifts, restrictions, DST) is domain/on-call.ts; these tables only hold the
-- definitions, validated there before they are written.
create table stega.schedules (
  id bigint generated always as identity primary key,
  name text not null unique,
  -- IANA zone in which handoff times, start dates and restrictions are read
  time_zone text not null,
  team_id bigint references stega.teams (id) on delete set null,
  -- who is paged when the schedule has nobody (a gap) and it is an escalation's target;
  -- null: the lead of the schedule's team
  fallback_agent_id bigint references stega.agents (id) on delete set null,
  -- the secret of the schedule's calendar feed URL; replacing it revokes every URL given out
  feed_token text not null default replace(gen_random_uuid()::text, '-', ''),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index schedules_team_idx on stega.schedules (team_id);

-- One rotation per layer, position 0 first (the lowest). Shift k of a layer starts at
-- start_date + k * shift_length (days, weeks: on the wall clock at handoff_time in the
-- schedule's zone; hours: real hours from the first handoff) and belongs to
-- participant_ids[k mod n]. Restrictions mask it: [{"days": ["monday", ...],
-- "start": "09:00", "end": "17:00"}], end before start crossing midnight.
create table stega.schedule_layers (
  schedule_id bigint not null references stega.schedules (id) on delete cascade,
  position int not null check (position >= 0),
  name text not null,
  participant_ids bigint[] not null check (cardinality(participant_ids) between 1 and 100),
  shift_length int not null check (shift_length between 1 and 1000),
  shift_unit text not null check (shift_unit in ('hours', 'days', 'weeks')),
  handoff_time text not null check (handoff_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  start_date date not null,
  restrictions jsonb not null default '[]' check (jsonb_typeof(restrictions) = 'array'),
  primary key (schedule_id, position)
);

-- Someone covers the schedule for [starts_at, ends_at), whatever the layers say; when two
-- overlap, the one created later wins.
create table stega.schedule_overrides (
  id bigint generated always as identity primary key,
  schedule_id bigint not null references stega.schedules (id) on delete cascade,
  agent_id bigint not null references stega.agents (id) on delete cascade,
  starts_at timestamptz not null,
  ends_at timestamptz not null,
  created_by text not null,
  created_at timestamptz not null default now(),
  check (ends_at > starts_at)
);
create index schedule_overrides_range_idx on stega.schedule_overrides (schedule_id, ends_at, starts_at);

-- Each agent's personal calendar feed secret (their shifts in every schedule); replacing it
-- revokes the URL.
alter table stega.agents
  add column feed_token text not null default replace(gen_random_uuid()::text, '-', '');

-- The key calendar feed URLs are signed with when STEGA_FEED_SECRET is not set: random, made
-- once here, shared by every process through the database, never shown by the API.
insert into stega.server_secrets (name, secret)
values ('calendar_feed', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
