-- Running clocks follow edits of their calendar and policy: a job walks the clocks of one
-- calendar, or the active tickets of one policy, in keyset batches by ticket id.
create index sla_clocks_calendar_running_idx on stega.sla_clocks (calendar_id, ticket_id)
  where stopped_at is null;
create index tickets_policy_active_idx on stega.tickets (policy_id, id)
  where status in ('open', 'in_progress', 'waiting');
