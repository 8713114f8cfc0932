-- Breach detection without per-breach writes elsewhere (issue 22: a storm's detection chunks are
-- on every alert's path; each committed chunk is when its 1,000 events become visible).
--
-- 1. No more `sla_missed` mark per inserted breach. Its update touched 1,000 tickets per chunk
--    and, since the column is in three indexes' predicates or INCLUDE lists, was never HOT: it
--    wrote a new entry in every one of the table's indexes, the full-text one included
--    (35–62 ms of a 100–200 ms chunk). Nothing needed it then: while a breached clock runs, its
--    ticket's `next_due_at` (its earliest running due instant) is already in the past, which
--    is how the lists see it breached (`sla_missed or next_due_at < now`), and the moment the
--    clock stops, pauses, restarts or moves, the list columns' refresh (db/clocks.ts) sets
--    `sla_missed` from the clocks *and* from the recorded breaches. So the flag now means
--    "missed a target whose clock has since changed", and the lists read the same tickets.
drop trigger if exists sla_breaches_mark_missed on stega.sla_breaches;
drop function if exists stega.tickets_mark_missed();

-- 2. The detector walks the due clocks in key order from where its previous chunk stopped
--    (`(due_at, ticket_id, kind) > cursor`), so chunk k of a storm no longer re-reads the
--    breaches of chunks 1 … k−1 through its anti-join (2 → 36 ms per chunk over 10,000). The
--    new index serves everything the old one on `due_at` did (the earliest due instant).
create index sla_clocks_running_due_key_idx on stega.sla_clocks (due_at, ticket_id, kind)
  where stopped_at is null and paused_since is null;
drop index stega.sla_clocks_running_due_idx;
