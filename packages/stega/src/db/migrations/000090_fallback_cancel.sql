-- A fallback is for an alert that reached nobody: once someone acknowledged the breach, or the
-- SLA clock stopped (met, or a late reply), or the ticket was resolved or closed, a fallback
-- still waiting for its deadline (status `scheduled`, not released yet) is cancelled, in the
-- transaction that records that, saying why. A fallback already released is left alone (its
-- PagerDuty acknowledge/resolve mirroring goes on).

-- Cancels the ticket's waiting fallback deliveries (those of one breach: its alert, its
-- escalation levels' and the warning of the same clock cycle; or of one SLA kind detected
-- within [from, to]; all when null), with last_error `cancelled: <reason> before the
-- fallback deadline`, and the PagerDuty acknowledge/resolve rows waiting on a cancelled
-- fallback trigger (they would only find it cancelled). Returns how many fallbacks it cancelled.
create function stega.fallbacks_cancel(
  p_ticket_id bigint, p_breach_id bigint, p_kind text, p_from timestamptz, p_to timestamptz,
  p_reason text)
  returns integer
  language sql
  set search_path = stega, pg_catalog, pg_temp
as $$
  with cancelled as (
    update stega.alert_deliveries f
       set status = 'cancelled', next_attempt_at = null, updated_at = pg_catalog.now(),
           last_error = 'cancelled: ' || p_reason || ' before the fallback deadline'
     where f.ticket_id = p_ticket_id and f.fallback and f.status = 'scheduled'
       and (p_kind is null or f.payload ->> 'kind' = p_kind)
       and (p_breach_id is null
            or (f.alert_type = 'breach' and f.alert_id = p_breach_id)
            or (f.alert_type = 'escalation' and (f.payload ->> 'breach_id')::bigint = p_breach_id)
            or (f.alert_type = 'warning' and f.alert_id in (
                  select w.id from stega.sla_warnings w
                    join stega.sla_breaches b on b.ticket_id = w.ticket_id and b.kind = w.kind
                                             and b.due_at = w.due_at
                   where b.id = p_breach_id)))
       and (p_from is null or (f.payload ->> 'detected_at')::timestamptz >= p_from)
       and (p_to is null or (f.payload ->> 'detected_at')::timestamptz <= p_to)
    returning f.alert_type, f.alert_id, f.channel, f.recipient
  ),
  follow_ups as (
    update stega.alert_deliveries u
       set status = 'cancelled', next_attempt_at = null, updated_at = pg_catalog.now(),
           last_error = 'cancelled: the fallback page was cancelled (' || p_reason || ')'
      from cancelled c
     where c.channel = 'pagerduty' and c.recipient like 'trigger:%'
       and u.alert_type = c.alert_type and u.alert_id = c.alert_id and u.channel = 'pagerduty'
       and u.fallback and u.recipient not like 'trigger:%'
       and substr(u.recipient, strpos(u.recipient, ':')) = substr(c.recipient, strpos(c.recipient, ':'))
       and u.status in ('pending', 'retrying', 'failed')
    returning u.id
  )
  select count(*)::int from cancelled;
$$;

-- A stopped SLA clock (met, a late reply, the ticket resolved): its cycle's waiting fallbacks
-- are cancelled, then (as before) its PagerDuty alerts resolved (none for a fallback page
-- cancelled here: it never went out).
create or replace function stega.sla_outcome_pagerduty_resolve() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  perform stega.fallbacks_cancel(
    new.ticket_id, null, new.kind, new.started_at, new.stopped_at,
    -- resolving stores the stopped clocks before their outcomes: with the resolution clock
    -- stopped, the ticket is resolved (or closed)
    case when new.kind = 'resolution'
           or exists (select 1 from stega.sla_clocks r
                       where r.ticket_id = new.ticket_id and r.kind = 'resolution'
                         and r.stopped_at is not null) then 'the ticket was resolved'
         when new.met then 'the SLA target was met'
         else 'the ticket was answered' end);
  perform stega.pagerduty_resolves_record(
    new.ticket_id, new.kind, new.started_at, new.stopped_at,
    case when new.met then 'the SLA target was met' else 'the SLA clock stopped (late)' end);
  return null;
end;
$$;

-- A resolved (or closed) ticket: every waiting fallback of it is cancelled, then its PagerDuty
-- alerts resolved.
create or replace function stega.ticket_pagerduty_resolve() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  perform stega.fallbacks_cancel(new.id, null, null, null, null, 'the ticket was ' || new.status);
  perform stega.pagerduty_resolves_record(new.id, null, null, null, 'the ticket was ' || new.status);
  return null;
end;
$$;
