-- Chat and on-call channels (issue 14): Slack and Teams webhooks, PagerDuty Events API v2.
-- Their deliveries are ledger rows like the webhook's (claim, call, outcome; retries, circuit
-- per endpoint). A PagerDuty row's recipient is `<action>:…<last 4 of the key>:<digest>`
-- (trigger, acknowledge, resolve: each its own row, so each is sent once), its secret the
-- routing key, its endpoint the events URL.
alter table stega.alert_deliveries drop constraint alert_deliveries_channel_check;
alter table stega.alert_deliveries add constraint alert_deliveries_channel_check
  check (channel in ('in_app', 'email', 'webhook', 'slack', 'teams', 'pagerduty'));

create index alert_deliveries_pagerduty_idx on stega.alert_deliveries (ticket_id)
  where channel = 'pagerduty';

-- Records one `resolve` per PagerDuty trigger of the ticket's alerts (of one SLA kind, detected
-- within [from, to]; all kinds and times when null) that may have reached PagerDuty. The row
-- is due at once; the retry loop sends it after its trigger is delivered (workers/alert-delivery.ts).
create function stega.pagerduty_resolves_record(
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

-- A stopped SLA clock (met, or missed and stopped since: a late reply, the resolution) resolves
-- the PagerDuty alerts of that clock's cycle.
create function stega.sla_outcome_pagerduty_resolve() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  perform stega.pagerduty_resolves_record(
    new.ticket_id, new.kind, new.started_at, new.stopped_at,
    case when new.met then 'the SLA target was met' else 'the SLA clock stopped (late)' end);
  return null;
end;
$$;

create trigger sla_outcomes_pagerduty_resolve
  after insert or update on stega.sla_outcomes
  for each row execute function stega.sla_outcome_pagerduty_resolve();

-- A resolved (or closed) ticket resolves every PagerDuty alert it has.
create function stega.ticket_pagerduty_resolve() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  perform stega.pagerduty_resolves_record(new.id, null, null, null, 'the ticket was ' || new.status);
  return null;
end;
$$;

create trigger tickets_pagerduty_resolve
  after update of status on stega.tickets
  for each row
  when (new.status in ('resolved', 'closed') and old.status is distinct from new.status)
  execute function stega.ticket_pagerduty_resolve();
