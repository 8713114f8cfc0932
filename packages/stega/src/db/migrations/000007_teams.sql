-- Teams: agents belong to teams, at most one member of each is its lead; a ticket belongs
-- to at most one team; a policy may be scoped to one team.
create table stega.teams (
  id bigint generated always as identity primary key,
  name text not null unique,
  -- IANA zone of the team's members who have none of their own; null: STEGA_TIME_ZONE
  time_zone text,
  created_at timestamptz not null default now()
);

create table stega.team_members (
  team_id bigint not null references stega.teams (id) on delete cascade,
  agent_id bigint not null references stega.agents (id) on delete cascade,
  is_lead boolean not null default false,
  primary key (team_id, agent_id)
);
create index team_members_agent_idx on stega.team_members (agent_id);
create unique index team_members_one_lead_uq on stega.team_members (team_id) where is_lead;

-- null: the agent's first team's zone, else STEGA_TIME_ZONE
alter table stega.agents add column time_zone text;

alter table stega.tickets add column team_id bigint references stega.teams (id);
create index tickets_team_idx on stega.tickets (team_id);

-- A policy's scope is (priority, requester organisation, team); null org or team: any.
alter table stega.sla_policies add column team_id bigint references stega.teams (id);
create index sla_policies_team_idx on stega.sla_policies (team_id);
drop index stega.sla_policies_scope_uq;
create unique index sla_policies_scope_uq
  on stega.sla_policies (priority, coalesce(requester_org, ''), coalesce(team_id, 0));
