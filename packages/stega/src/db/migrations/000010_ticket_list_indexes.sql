-- Ticket lists at 300,000 tickets (bench/ticket-lists): narrower rows and indexes for the
-- views agents poll most.

-- The search document as an index expression, not a stored column: every list reads the
-- tickets' heap, and the tsvector made each row about half again as wide.
drop index stega.tickets_search_idx;
alter table stega.tickets drop column search_doc;
create index tickets_search_idx on stega.tickets using gin (
  to_tsvector('simple', subject || ' ' || requester_name || ' ' || requester_email || ' '
    || coalesce(requester_org, '')));

-- An agent's open work and the unassigned queue, next deadline first, straight from an index.
create index tickets_active_assignee_due_idx on stega.tickets
  (assignee_id, (coalesce(next_due_at, 'infinity'::timestamptz)), id)
  where status in ('open', 'in_progress');

-- "At risk" (past the warning instant, not yet due) is a running clock whose
-- [warn_at, due_at) contains now: one GiST lookup instead of a scan of the running clocks.
create index sla_clocks_at_risk_idx on stega.sla_clocks
  using gist (tstzrange(least(warn_at, due_at), due_at))
  where stopped_at is null and paused_since is null;
