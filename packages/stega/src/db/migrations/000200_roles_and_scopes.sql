-- Roles, deactivation and integration scopes (issue 24).
-- An agent's role: admin (everything), supervisor (every team's tickets and reports, no
-- settings), agent (the tickets of their teams, those assigned to them, those of no team).
alter table stega.agents
  add column role text not null default 'agent'
    check (role in ('admin', 'supervisor', 'agent')),
  -- set: the agent cannot sign in, their tokens are revoked; history keeps their name
  add column deactivated_at timestamptz;

-- A token is an agent's own (acts as the agent, with the agent's role), an admin token, or an
-- integration's: no agent, only what its scopes allow (posting as the requester among them).
alter table stega.api_tokens drop constraint api_tokens_role_check;
alter table stega.api_tokens
  add constraint api_tokens_role_check check (role in ('agent', 'admin', 'integration')),
  add column scopes text[] not null default '{}',
  add constraint api_tokens_integration_no_agent
    check (role <> 'integration' or agent_id is null),
  add constraint api_tokens_scopes_integration_only
    check (role = 'integration' or scopes = '{}');
