-- "At risk" from the index alone: the running clocks whose [warn_at, due_at) contains now,
-- with the ticket id and both instants in the index so the lookup never visits the heap
-- (an index-only scan needs every column the query names).
drop index if exists stega.sla_clocks_at_risk_idx;
create index sla_clocks_at_risk_idx on stega.sla_clocks
  using gist (tstzrange(least(warn_at, due_at), due_at)) include (ticket_id, warn_at, due_at)
  where stopped_at is null and paused_since is null;
