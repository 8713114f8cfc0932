-- Per-policy pre-breach warnings: shares of the target, ascending, each in (0, 1); null: the
-- one global share (SLA_WARNING_SHARE); empty: no warnings.
alter table stega.sla_policies add column warning_thresholds numeric[]
  check (warning_thresholds is null or (0 < all (warning_thresholds) and 1 > all (warning_thresholds)));

-- Each clock keeps the shares it warns at and their instants (same order), written with
-- the clock; null on clocks written before per-policy thresholds (one warning, at warn_at).
-- warn_at stays the first warning instant (at risk from there on); next_warn_at is the next
-- one not yet warned for the current due time (null: none), the deadline job's instant.
alter table stega.sla_clocks
  add column warning_shares numeric[],
  add column warning_instants timestamptz[],
  add column next_warn_at timestamptz;
update stega.sla_clocks c
   set next_warn_at = c.warn_at
 where c.stopped_at is null and c.warn_at < c.due_at
   and not exists (select 1 from stega.sla_warnings w
                    where w.ticket_id = c.ticket_id and w.kind = c.kind and w.due_at = c.due_at);
create index sla_clocks_running_next_warn_idx on stega.sla_clocks (next_warn_at)
  where stopped_at is null and paused_since is null;

-- A warning is once per (ticket, kind, due time, threshold). threshold null: recorded before
-- per-threshold warnings (it stands for every threshold of its due time).
alter table stega.sla_warnings add column threshold numeric;
alter table stega.sla_warnings drop constraint sla_warnings_ticket_id_kind_due_at_key;
alter table stega.sla_warnings add constraint sla_warnings_once_key
  unique nulls not distinct (ticket_id, kind, due_at, threshold);
