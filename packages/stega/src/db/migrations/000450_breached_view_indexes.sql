-- The "breached" ticket views from an index alone (issue 24: ≤ 20 ms at 300,000 tickets, as the
-- other views). A ticket is breached when it missed a target (sla_missed) or a running clock is
-- past due (next_due_at < now): the list asks `sla_missed or next_due_at < $now`, which implies
-- each index's predicate, and the indexes carry both columns, so the page and the bounded count
-- walk index entries of breached-or-running tickets only and never visit the heap (before: the
-- count scanned some 14,000 tickets to find its 1,001 breached ones among the open work).

-- "breached", newest first: the tickets that missed a target or have a running clock
create index tickets_breached_idx on stega.tickets (id)
  include (sla_missed, next_due_at)
  where sla_missed or next_due_at is not null;

-- "breached, open work", next deadline first (and its count)
create index tickets_active_breach_idx
  on stega.tickets ((coalesce(next_due_at, 'infinity'::timestamptz)), id)
  include (sla_missed, next_due_at)
  where status in ('open', 'in_progress');
