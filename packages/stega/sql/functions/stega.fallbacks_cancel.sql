-- fallbacks_cancel: a fallback is for an alert that reached nobody; cancels the ticket's
-- fallback deliveries still waiting for their deadline (status `scheduled`) with last_error
-- `cancelled: <reason> before the fallback deadline`, and the PagerDuty acknowledge/resolve
-- rows waiting on a cancelled fallback trigger (they would only find it cancelled). A
-- fallback already released is left alone.
-- parameters: p_ticket_id, the ticket; p_breach_id, only that breach's fallbacks (its alert,
--   its escalation levels', the warning of the same clock cycle; null: all); p_kind, only
--   alerts of that SLA kind (null: all); p_from, p_to, only alerts detected within
--   [p_from, p_to] (null: unbounded); p_reason, why, for last_error.
-- returns: how many fallbacks it cancelled.
-- tables: updates stega.alert_deliveries; reads stega.sla_warnings, stega.sla_breaches.
create or replace function stega.fallbacks_cancel(
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
