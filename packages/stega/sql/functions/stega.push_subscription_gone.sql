-- push_subscription_gone: the trigger after a push step failed for good because the push
-- service answered 404 or 410 (RFC 8030 section 7.3: the subscription expired or was
-- unsubscribed). The contact method the row was sent to (its recipient is
-- `agent:<agent id>/push/<contact method id>@<push service host>`) is marked invalid with the
-- answer as its reason: no later page plans a step to it.
-- trigger: alert_deliveries_push_subscription_gone, after update of status on
--   stega.alert_deliveries, for a `push` row of a person's rules that became failed_permanent
--   with last_outcome.status 404 or 410.
-- returns: null (an after-row trigger).
-- tables: updates stega.contact_methods.
create or replace function stega.push_subscription_gone() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  update stega.contact_methods c
     set invalid_at = pg_catalog.now(),
         invalid_reason = 'the push service answered ' || (new.last_outcome ->> 'status')
                          || ': the subscription is gone (register this browser again)'
   where c.method = 'push' and c.agent_id = new.page_agent_id and c.invalid_at is null
     and c.id = (pg_catalog.substring(new.recipient, '^agent:\d+/push/(\d+)'))::bigint;
  return null;
end
$$;
