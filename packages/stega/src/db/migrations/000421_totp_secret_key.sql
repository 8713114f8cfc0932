-- Issue 24: TOTP secrets are stored sealed (AES-256-GCM, services/totp-secret-box.ts), no
-- longer in clear. The key is derived from STEGA_TOTP_KEY; without it, from this random one,
-- made once here and shared by every process through the database. Rows written in clear
-- before are sealed by the web process at start.
insert into stega.server_secrets (name, secret)
values ('totp_key', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))
on conflict (name) do nothing;
