-- Sign-in with email and password, server-side sessions, one-time emailed links (issue 24).

-- scrypt, its parameters in the string (services/passwords.ts); null: no password set yet
alter table stega.agents
  add column password_hash text,
  add column password_changed_at timestamptz;
-- sign-in finds the agent by address whatever its case
create unique index agents_email_lower_uq on stega.agents (lower(email));

-- A browser's session: the cookie holds a random secret, this table its SHA-256. Signing
-- out, a password change or reset, and deactivation delete the rows: the session ends at
-- the next request. Idle expiry is checked against seen_at, absolute against expires_at.
create table stega.sessions (
  id bigint generated always as identity primary key,
  secret_sha256 text not null unique,
  agent_id bigint not null references stega.agents (id) on delete cascade,
  -- sent back in X-CSRF-Token by every write the cookie authenticates
  csrf_token text not null,
  created_at timestamptz not null,
  seen_at timestamptz not null,
  expires_at timestamptz not null
);
create index sessions_agent_idx on stega.sessions (agent_id);

-- One-time links by email: an invitation (set a first password) or a password reset. The
-- secret is in the link only; this table keeps its SHA-256. Recorded and committed before
-- the mail is sent; the sending's outcome is recorded after.
create table stega.sign_in_links (
  id bigint generated always as identity primary key,
  kind text not null check (kind in ('invitation', 'reset')),
  agent_id bigint not null references stega.agents (id) on delete cascade,
  secret_sha256 text not null unique,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  sent_at timestamptz,
  send_error text
);
create index sign_in_links_agent_idx on stega.sign_in_links (agent_id);
