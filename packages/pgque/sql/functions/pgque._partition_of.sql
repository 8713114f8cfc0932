-- _partition_of: the slot of a partition key among i_n slots, computed as PgQue 0.3 does:
-- hashtextextended(key, 0) brought into 0 .. i_n - 1 (the hash may be negative); a NULL
-- key belongs to slot 0. Plain SQL, immutable and without settings, so the planner inlines
-- it into a filter and a slot's read costs no function call per row.
-- params: the key (ev_extra1), the slot count. returns: the slot. tables: none.
create or replace function pgque._partition_of(i_key text, i_n int4)
returns int4
language sql
immutable
parallel safe
as $$
  select coalesce(((pg_catalog.hashtextextended(i_key, 0) % i_n + i_n) % i_n)::int4, 0)
$$;
