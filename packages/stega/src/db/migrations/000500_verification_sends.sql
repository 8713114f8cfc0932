-- Verification messages sent (issue 25): every code by SMS, call, email or push, and every
-- Slack link message, one row at the moment it is allowed. Each new one is refused past a
-- per-agent and a per-address count within the last hour (VERIFICATION_SENDS_PER_AGENT_HOUR,
-- VERIFICATION_SENDS_PER_ADDRESS_HOUR), so that nobody can text or call a number, or mail an
-- address, again and again by adding or re-sending a method, nor try code after code (each
-- new code resets its five wrong tries). Rows older than a day are deleted as new ones come.
create table stega.verification_sends (
  id bigint generated always as identity primary key,
  agent_id bigint not null references stega.agents (id) on delete cascade,
  method text not null,
  address text not null,
  sent_at timestamptz not null default now()
);
create index verification_sends_agent_idx on stega.verification_sends (agent_id, sent_at);
create index verification_sends_address_idx on stega.verification_sends (address, sent_at);
