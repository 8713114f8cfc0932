-- Single sign-on with OpenID Connect, and a TOTP second factor for password sign-ins (issue 24).

-- An agent's account at an OpenID provider. The issuer and its `sub` name a person for good
-- (an address may change): the first single sign-on with a verified address of an allowed
-- domain links them to the agent of that address (made then if none), later ones find the
-- agent by this link.
create table stega.agent_identities (
  id bigint generated always as identity primary key,
  agent_id bigint not null references stega.agents (id) on delete cascade,
  issuer text not null,
  subject text not null,
  created_at timestamptz not null,
  signed_in_at timestamptz not null,
  unique (issuer, subject)
);
create index agent_identities_agent_idx on stega.agent_identities (agent_id);

-- A single sign-on under way, from the redirect to the provider to its answer (minutes). The
-- browser holds a random secret in a cookie; this table keeps its SHA-256 with the request's
-- state, nonce and PKCE verifier. The answer takes the row (delete … returning): it works
-- once, and only in the browser that started it.
create table stega.oidc_sign_ins (
  id bigint generated always as identity primary key,
  browser_sha256 text not null unique,
  state text not null,
  nonce text not null,
  code_verifier text not null,
  -- the page of Stega to open after signing in: a path of this site, checked before it is stored
  return_to text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
create index oidc_sign_ins_expires_idx on stega.oidc_sign_ins (expires_at);

-- An agent's TOTP second factor (RFC 6238: SHA-1, 6 digits, 30 s steps). confirmed_at null:
-- enrolment started, its secret shown, not yet confirmed by a first code (password sign-in
-- does not ask for it yet). last_step: the time step of the last code accepted; a code of
-- that step or an earlier one is refused, so a code cannot be used twice.
create table stega.agent_totp (
  agent_id bigint primary key references stega.agents (id) on delete cascade,
  -- base32; the authenticator app has it too
  secret text not null,
  created_at timestamptz not null,
  confirmed_at timestamptz,
  last_step bigint
);

-- One-time recovery codes of a second factor, by SHA-256 (each has 80 random bits). Made at
-- the enrolment's confirmation, shown once; each signs in once in place of a TOTP code.
create table stega.totp_recovery_codes (
  id bigint generated always as identity primary key,
  agent_id bigint not null references stega.agents (id) on delete cascade,
  code_sha256 text not null,
  created_at timestamptz not null,
  used_at timestamptz,
  unique (agent_id, code_sha256)
);
