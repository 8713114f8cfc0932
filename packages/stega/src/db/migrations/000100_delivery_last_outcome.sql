-- Issue 22: what the last attempt of a delivery came to, as typed fields beside the words of
-- last_error: {"type": "delivered" | "failed" | "moot" | "waiting"} and, for a failure, its
-- kind (refused, http, rate_limited, timeout, network, smtp, permanent) with its status,
-- Retry-After instant, time-out, error code or mail reply. Written with each attempt's
-- outcome (delivery/ledger/outcomes.ts); null until a first attempt has an outcome. The API
-- and the UI read it; nobody reads last_error for its meaning.
alter table stega.alert_deliveries add column last_outcome jsonb;
