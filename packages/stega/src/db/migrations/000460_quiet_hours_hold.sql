-- Quiet hours hold low urgency (issue 25): a person's warning step that would be sent inside
-- their quiet hours is recorded `scheduled` for the end of them, with held_until that end
-- (the person's wall-clock instant; next_attempt_at is it scaled by SLA_RETRY_TIME_SCALE).
-- When a held row is claimed, the person's other held rows of the same method and address
-- (held until no later) go in the same message, a digest: each gets digest_of the row whose
-- send carried it, follows that row's outcome and is never claimed on its own.
alter table stega.alert_deliveries add column held_until timestamptz;
alter table stega.alert_deliveries add column digest_of bigint;

-- the digest's gathering: a person's held rows of one method and address
create index alert_deliveries_held_idx
  on stega.alert_deliveries (page_agent_id, channel, recipient)
  where held_until is not null;
