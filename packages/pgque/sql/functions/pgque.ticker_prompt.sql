-- ticker_prompt: the leader ticker's fast path for quiet queues, called between and
-- besides its ticker() calls.
-- * A queue with nothing new since its last tick, that tick at least i_quiet old, is armed
--   (queue_ticker_wake): its next producer sends NOTIFY "pgque.ticker" with the queue name
--   at commit, and the ticker calls this function at once.
-- * An armed queue that a producer named (i_woken; NULL: every armed queue, for a ticker
--   that has just started listening) is ticked at once, without waiting for
--   ticker_max_count or ticker_max_lag, provided its last tick is at least i_quiet old
--   and every consumer active within the last second has taken that tick (a slow consumer
--   then gets fewer, larger batches, not a backlog of tiny ones); otherwise it is returned
--   in `deferred` for the next call. The name arrives after the
--   producer's commit, so the tick includes its events (the sequence alone would also
--   count producers still open, and tick before them).
-- * A woken armed queue that is busy is disarmed instead of ticked, and ticks by the
--   thresholds from then on, as every busy queue does, whose producers send no
--   notification at all. Busy means more events than a token bucket of rate i_max_rate
--   and depth i_max_rate * 50 ms lets through (100 events at 2,000/s): for some tick
--   among the queue's last 100, the events since it exceed
--   i_max_rate * (its age + 50 ms).
--   So a producer that falls behind and catches up (a pause, then its backlog at once)
--   never makes a queue whose rate is below i_max_rate busy unless its backlog exceeds
--   i_max_rate * 50 ms events, while a burst of more events than that is disarmed at its
--   first prompt, and a steady rate r > i_max_rate once the prompt ticks span
--   i_max_rate * 50 ms / (r - i_max_rate) (12.5 ms at 10,000/s; a rate so close to
--   i_max_rate that 100 ticks do not span that stays armed). A disarmed queue is
--   armed again only once idle (as above: nothing new, its tick at least i_quiet old),
--   never with events pending.
-- Paused and externally ticked queues are never armed. ticker() disarms a queue when it
-- ticks it with ticker_max_count new events, or with new events no waiting consumer
-- explains (see ticker). Calling it from anywhere else does no harm.
-- params: woken queue names, the quiet interval, the rate above which a queue is busy.
-- returns: ticks made and the woken queues deferred. tables: queue, tick.
create or replace function pgque.ticker_prompt(
  i_woken text[] default null, i_quiet interval default '5 milliseconds',
  i_max_rate float8 default 2000,
  out ticks integer, out deferred text[])
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  locked boolean;
  q pgque.queue;
  last_tick pgque.tick;
  seq_now bigint;
  fresh bigint;
  age interval;
  action text;
  busy boolean;
  now_at timestamptz;
  excess float8;
  new_tick bigint;
begin
  ticks := 0;
  deferred := '{}';
  for qid in
    select queue_id from pgque.queue
     where queue_ticker_wake or not (queue_external_ticker or queue_ticker_paused)
     order by queue_name
  loop
    -- decide without a lock (most calls change nothing), then lock the row and decide again
    foreach locked in array array[false, true] loop
      if locked then
        select * into q from pgque.queue where queue_id = qid for no key update;
      else
        select * into q from pgque.queue where queue_id = qid;
      end if;
      exit when not found;
      action := null;
      if q.queue_external_ticker or q.queue_ticker_paused then
        action := case when q.queue_ticker_wake then 'disarm' end;
      else
        select * into last_tick from pgque.tick
         where tick_queue = q.queue_id order by tick_id desc limit 1;
        exit when not found;
        seq_now := pgque.seq_getval(pgque._queue_sequence(q.queue_id, 'id'));
        fresh := seq_now - last_tick.tick_event_seq;
        age := pg_catalog.now() - last_tick.tick_time;
        if not q.queue_ticker_wake then
          action := case when fresh = 0 and age >= i_quiet then 'arm' end;
        elsif i_woken is null or coalesce(q.queue_name = any(i_woken), false) then
          busy := false;
          if fresh > 0 and age >= i_quiet then
            -- a token bucket of rate i_max_rate and depth i_max_rate * 50 ms: busy when the
            -- events since one of the last 100 ticks overflow it (clock_timestamp(), read
            -- after the sequence, and tick_time, read before its own, both err towards
            -- quiet). The backward scan of the primary key reads those 100 rows at most.
            now_at := pg_catalog.clock_timestamp();
            select coalesce(max((seq_now - t.tick_event_seq)::float8
                                - i_max_rate * extract(epoch from now_at - t.tick_time)::float8), 0)
              into excess
              from (select tick_event_seq, tick_time from pgque.tick
                     where tick_queue = q.queue_id order by tick_id desc limit 100) t;
            busy := excess > i_max_rate * 0.05;
          end if;
          action := case
            when age < i_quiet then 'defer'
            -- events coming faster than i_max_rate: busy, back to the thresholds
            when busy then 'disarm'
            -- a live consumer has not taken the newest tick yet: wait for it, so a slow
            -- consumer gets fewer, larger batches instead of a backlog of tiny ones
            when pgque._tick_untaken(q.queue_id, last_tick.tick_id) then 'defer'
            else 'tick'
          end;
        end if;
      end if;
      exit when action is null;
      if action = 'defer' then
        deferred := deferred || q.queue_name;
        exit;
      end if;
      continue when not locked;
      if action = 'disarm' then
        update pgque.queue set queue_ticker_wake = false where queue_id = q.queue_id;
      elsif action = 'arm' then
        update pgque.queue set queue_ticker_wake = true where queue_id = q.queue_id;
      else
        new_tick := pg_catalog.nextval(pgque._queue_sequence(q.queue_id, 'tick')::regclass);
        insert into pgque.tick (tick_queue, tick_id, tick_event_seq)
        values (q.queue_id, new_tick, seq_now);
        perform pg_catalog.pg_notify('pgque_' || q.queue_name, new_tick::text);
        ticks := ticks + 1;
      end if;
    end loop;
  end loop;
end;
$$;
