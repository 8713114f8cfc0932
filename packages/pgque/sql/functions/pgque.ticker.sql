-- ticker: ticker(queue) closes a tick when enough happened since the last one: ticker_max_count
-- new events, or ticker_max_lag elapsed with at least one. An idle queue still ticks,
-- at intervals that double from max_lag/2 up to ticker_idle_period.
-- A tick stores the snapshot and the id sequence's last_value (is_called ignored, so
-- the first event after create_queue reads as "nothing new" and ticks at once).
-- Ticks of one queue are serialised on its row, so their snapshots are monotone.
-- NOTIFY pgque_<queue> carries the tick id, a lossy hint for waiting consumers.
-- A tick with new events disarms the queue's producer wake-up (see ticker_prompt) when
-- ticker_max_count of them came in (the queue is busy), or when no consumer explains why
-- no prompt tick took them and the tick before was not a prompt tick either, both ticks
-- at least ticker_max_lag apart (nobody runs ticker_prompt: pg_cron alone). A lag tick
-- while a live consumer has not taken the previous tick (ticker_prompt waits for it), or
-- right after ticks closer than ticker_max_lag (the leader ticker paused once), leaves
-- the queue armed, so its next events still tick at their commit.
-- returns: the new tick id, or NULL when it is not time yet. tables: queue, tick.
create or replace function pgque.ticker(i_queue_name text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  last_tick pgque.tick;
  before_last timestamptz;
  seq_now bigint;
  fresh bigint;
  lag interval;
  cur_txid bigint := pg_catalog.pg_current_xact_id()::text::bigint;
  new_tick bigint;
begin
  select * into q from pgque.queue where queue_name = i_queue_name for no key update;
  if not found then
    raise exception 'no such queue' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  if q.queue_external_ticker then
    raise exception 'This queue has external tick source.' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
  end if;
  if q.queue_ticker_paused then
    raise exception 'Ticker has been paused for this queue' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
  end if;

  seq_now := pgque.seq_getval(pgque._queue_sequence(q.queue_id, 'id'));
  select * into last_tick from pgque.tick
   where tick_queue = q.queue_id order by tick_id desc limit 1;
  if found then
    if pg_catalog.pg_snapshot_xmin(last_tick.tick_snapshot)::text::bigint > cur_txid then
      raise exception 'Invalid PgQ state: old xmin=%, old xmax=%, cur txid=%',
        pg_catalog.pg_snapshot_xmin(last_tick.tick_snapshot),
        pg_catalog.pg_snapshot_xmax(last_tick.tick_snapshot), cur_txid using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ009';
    end if;
    fresh := seq_now - last_tick.tick_event_seq;
    lag := pg_catalog.now() - last_tick.tick_time;
    if fresh > 0 then
      if fresh < q.queue_ticker_max_count and lag < q.queue_ticker_max_lag then
        return null;
      end if;
    else
      select tick_time into before_last from pgque.tick
       where tick_queue = q.queue_id and tick_id < last_tick.tick_id
       order by tick_id desc limit 1;
      if found and (lag < q.queue_ticker_max_lag / 2
                    or (lag < 2 * (last_tick.tick_time - before_last)
                        and lag < q.queue_ticker_idle_period)) then
        return null;
      end if;
    end if;
  end if;

  new_tick := pg_catalog.nextval(pgque._queue_sequence(q.queue_id, 'tick')::regclass);
  insert into pgque.tick (tick_queue, tick_id, tick_event_seq)
  values (q.queue_id, new_tick, seq_now);
  -- busy (ticker_max_count events) or nobody prompt-ticking it: its producers stop waking
  -- the leader ticker (ticker_prompt arms it again once it is quiet). Waiting for a live
  -- consumer (_tick_untaken, as in ticker_prompt), or just after ticks closer than max_lag
  -- (prompt ticks: the leader ticker paused once), it stays armed.
  if q.queue_ticker_wake and fresh > 0
     and (fresh >= q.queue_ticker_max_count
          or (not pgque._tick_untaken(q.queue_id, last_tick.tick_id)
              and coalesce((select last_tick.tick_time - t.tick_time from pgque.tick t
                             where t.tick_queue = q.queue_id and t.tick_id < last_tick.tick_id
                             order by t.tick_id desc limit 1) >= q.queue_ticker_max_lag, true))) then
    update pgque.queue set queue_ticker_wake = false where queue_id = q.queue_id;
  end if;
  perform pg_catalog.pg_notify('pgque_' || q.queue_name, new_tick::text);
  return new_tick;
end;
$$;

-- ticker(): tick every queue that is neither paused nor externally ticked.
-- returns: how many queues got a new tick.
create or replace function pgque.ticker()
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qname text;
  ticked bigint := 0;
begin
  for qname in
    select queue_name from pgque.queue
     where not queue_external_ticker and not queue_ticker_paused
     order by queue_name
  loop
    if pgque.ticker(qname) is not null then
      ticked := ticked + 1;
    end if;
  end loop;
  return ticked;
end;
$$;

-- ticker(queue, tick_id, time, event_seq): a tick pushed by an external source.
-- returns: the tick id. tables: queue, tick.
create or replace function pgque.ticker(
  i_queue_name text, i_tick_id bigint, i_orig_timestamp timestamptz, i_event_seq bigint)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  last_tick pgque.tick;
begin
  select * into q from pgque.queue where queue_name = i_queue_name for no key update;
  if not found then
    raise exception 'queue not found: %', i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  if q.queue_ticker_paused then
    raise exception 'queue % is paused (queue_ticker_paused = true)', i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
  end if;
  if not q.queue_external_ticker then
    raise exception 'queue % is not configured for external ticker (queue_external_ticker = false)', i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
  end if;
  select * into last_tick from pgque.tick
   where tick_queue = q.queue_id order by tick_id desc limit 1;
  if found then
    if i_tick_id is null or i_tick_id <= last_tick.tick_id then
      raise exception 'external ticker tick_id must be strictly greater than current max (% <= %)',
        i_tick_id, last_tick.tick_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
    end if;
    if i_event_seq is null or i_event_seq < last_tick.tick_event_seq then
      raise exception 'external ticker event_seq must be >= previous tick (% < %)',
        i_event_seq, last_tick.tick_event_seq using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
    end if;
  end if;
  insert into pgque.tick (tick_queue, tick_id, tick_time, tick_event_seq)
  values (q.queue_id, i_tick_id, coalesce(i_orig_timestamp, pg_catalog.now()), i_event_seq);
  perform pgque.seq_setval(pgque._queue_sequence(q.queue_id, 'tick'), i_tick_id);
  perform pgque.seq_setval(pgque._queue_sequence(q.queue_id, 'id'), i_event_seq);
  perform pg_catalog.pg_notify('pgque_' || q.queue_name, i_tick_id::text);
  return i_tick_id;
end;
$$;
