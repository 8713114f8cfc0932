-- pagerduty_resolves_record: records one `resolve` per PagerDuty trigger of the ticket's
-- alerts that may have reached PagerDuty; each is due at once, and the retry loop sends it
-- after its trigger is delivered.
-- parameters: p_ticket_id, the ticket; p_kind, only alerts of that SLA kind (null: all);
--   p_from, p_to, only alerts detected within [p_from, p_to] (null: unbounded);
--   p_reason, written to the event's details as `resolved_because`.
-- returns: nothing; a resolve already recorded is left as it is.
-- tables: reads and inserts into stega.alert_deliveries.
create or replace function stega.pagerduty_resolves_record(
  p_ticket_id bigint, p_kind text, p_from timestamptz, p_to timestamptz, p_reason text)
  returns void
  language sql
  set search_path = stega, pg_catalog, pg_temp
as $$
  insert into stega.alert_deliveries as d
         (alert_type, alert_id, ticket_id, channel, recipient, fallback, endpoint, status,
          attempts, next_attempt_at, give_up_at, retry_delays, payload, secret)
  select t.alert_type, t.alert_id, t.ticket_id, 'pagerduty',
         'resolve' || substr(t.recipient, strpos(t.recipient, ':')), t.fallback, t.endpoint,
         'retrying', 0, pg_catalog.now(),
         pg_catalog.now() + coalesce(t.give_up_at - t.created_at, interval '24 hours'),
         t.retry_delays,
         t.payload || pg_catalog.jsonb_build_object('pagerduty',
           coalesce(t.payload -> 'pagerduty', '{}'::jsonb)
             || pg_catalog.jsonb_build_object('details',
                  pg_catalog.jsonb_build_object('resolved_because', p_reason))),
         t.secret
    from stega.alert_deliveries t
   where t.ticket_id = p_ticket_id and t.channel = 'pagerduty' and t.recipient like 'trigger:%'
     and t.status not in ('failed_permanent', 'cancelled')
     and (p_kind is null or t.payload ->> 'kind' = p_kind)
     and (p_from is null or (t.payload ->> 'detected_at')::timestamptz >= p_from)
     and (p_to is null or (t.payload ->> 'detected_at')::timestamptz <= p_to)
  on conflict (alert_type, alert_id, channel, recipient, fallback) do nothing;
$$;
