-- _writer_table: where a producer writes: the queue's current event table, chosen the one
-- way rotation relies on. The transaction takes its xid first, so its table choice
-- postdates its xid (see maint_rotate_tables_step1); outside READ COMMITTED the queue row
-- is key-share locked, so a snapshot older than a rotation fails with a serialization
-- error instead of writing to a stale table.
-- On a queue the leader ticker armed (queue_ticker_wake: it found the queue quiet), it
-- sends NOTIFY "pgque.ticker" with the queue name, delivered when the producer commits,
-- so the ticker ticks at once (see ticker_prompt). A busy queue is not armed: nothing sent.
-- Every producer goes through it but send, the hottest path, which inlines these steps (a
-- PL/pgSQL call is a tenth of a single send) and must stay in step with it.
-- params: queue name. returns: the queue id and its current table's number (see
-- _event_table, _queue_sequence, _write_event), and whether inserts are refused
-- (queue_disable_insert, unless session_replication_role is replica).
-- errors: queue not found: <name>.
-- Invoker rights and no search_path of its own: on the send hot path, called only from
-- security-definer writers (nobody else may execute it).
create or replace function pgque._writer_table(
  i_queue_name text, out queue_id int4, out cur_table int4, out insert_disabled boolean)
language plpgsql
as $$
declare
  q record;
  own_xid xid8;
begin
  -- the xid first (an assignment, cheaper than a PERFORM query): the table choice postdates it
  own_xid := pg_catalog.pg_current_xact_id();
  if pg_catalog.current_setting('transaction_isolation') = 'read committed' then
    select r.queue_id, r.queue_cur_table, r.queue_disable_insert, r.queue_ticker_wake
      into q
      from pgque.queue r
     where r.queue_name = i_queue_name;
  else
    select r.queue_id, r.queue_cur_table, r.queue_disable_insert, r.queue_ticker_wake
      into q
      from pgque.queue r
     where r.queue_name = i_queue_name
       for key share;
  end if;
  if not found then
    raise exception 'queue not found: %', i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  if q.queue_ticker_wake then
    perform pg_catalog.pg_notify('pgque.ticker', i_queue_name);
  end if;
  queue_id := q.queue_id;
  cur_table := q.queue_cur_table;
  insert_disabled := q.queue_disable_insert
                     and pg_catalog.current_setting('session_replication_role') <> 'replica';
end;
$$;
