-- ticker_prompt: the leader ticker's fast path, called between and besides its ticker()
-- calls. It ticks a queue before ticker_max_count or ticker_max_lag say so in two cases.
-- * Quiet queues, woken by their producers. A queue with nothing new since its last tick,
--   that tick at least i_quiet old, is armed (queue_ticker_wake): its next producer sends
--   NOTIFY "pgque.ticker" with the queue name at commit, and the ticker calls this
--   function at once. An armed queue that a producer named (i_woken; NULL: every armed
--   queue, for a ticker that has just started listening) is ticked at once, provided its
--   last tick is at least i_quiet old and every consumer active within the last second
--   has taken that tick (a slow consumer then gets fewer, larger batches, not a backlog of
--   tiny ones); otherwise it is returned in `deferred` for the next call. The name arrives
--   after the producer's commit, so the tick includes its events (the sequence alone would
--   also count producers still open, and tick before them).
-- * Busy queues, for a waiting consumer. A queue that is not armed is ticked when events
--   are pending (its id sequence is past its last tick's position: no event table is
--   read) and a consumer is near (_tick_taken of the last tick or the one before: it
--   waits, or the batch it works on or takes next ends there, so the new tick is ready
--   when it asks), once the last tick is at least i_busy_interval old: so at most one such
--   tick per i_busy_interval, and none while every consumer is further behind (next_in
--   asks for calls while a live one is one tick short of near, _tick_taken_next; one
--   further behind wakes the ticker from next_batch once it is near, _wake_ticker_near). Nothing
--   is written per event, and its producers send nothing. Its last events may belong to
--   producers still open at its last tick (the sequence counts them): once nothing new
--   comes, a queue whose last tick had events, a consumer near, gets one more (trailing)
--   tick at least i_busy_interval and i_quiet after it, and is armed after that one.
--   i_busy_interval NULL turns this case off.
-- A woken armed queue that is busy is disarmed, and then ticked as any busy queue is.
-- Busy means more events than a token bucket of rate i_max_rate and depth
-- i_max_rate * 50 ms lets through (100 events at 2,000/s): for some tick among the
-- queue's last 100, the events since it exceed i_max_rate * (its age + 50 ms). So a
-- producer that falls behind and catches up (a pause, then its backlog at once) never
-- makes a queue whose rate is below i_max_rate busy unless its backlog exceeds
-- i_max_rate * 50 ms events, while a burst of more events than that is disarmed at its
-- first prompt, and a steady rate r > i_max_rate once the prompt ticks span
-- i_max_rate * 50 ms / (r - i_max_rate) (12.5 ms at 10,000/s; a rate so close to
-- i_max_rate that 100 ticks do not span that stays armed). A disarmed queue is armed
-- again only once idle (as above: nothing new, its tick at least i_quiet old), never with
-- events pending.
-- Paused and externally ticked queues are never armed nor ticked here. ticker() disarms a
-- queue when it ticks it with ticker_max_count new events, or with new events no waiting
-- consumer explains (see ticker). Calling it from anywhere else does no harm.
-- params: woken queue names, the quiet interval, the rate above which a queue is busy,
-- the least interval between two ticks of a busy queue.
-- returns: ticks made, the woken queues deferred, and how soon a queue needs this function
-- again (next_in: its busy interval or quiet interval runs out; NULL: none, the ticker
-- may wait for a notification or its period). tables: queue, tick, subscription.
create or replace function pgque.ticker_prompt(
  i_woken text[] default null, i_quiet interval default '5 milliseconds',
  i_max_rate float8 default 2000, i_busy_interval interval default '10 milliseconds',
  out ticks integer, out deferred text[], out next_in interval)
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  locked boolean;
  q pgque.queue;
  last_tick pgque.tick;
  prev_tick pgque.tick;
  near boolean;
  seq_now bigint;
  fresh bigint;
  age interval;
  busy boolean;
  now_at timestamptz;
  excess float8;
  new_tick bigint;
  -- what to do with the queue: change its flag (NULL: leave it), tick it, defer it; and
  -- when it needs a call again
  set_wake boolean;
  make_tick boolean;
  defer boolean;
  due interval;
  trail_after interval := greatest(i_quiet, i_busy_interval);
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
      set_wake := null;
      make_tick := false;
      defer := false;
      due := null;
      if q.queue_external_ticker or q.queue_ticker_paused then
        if q.queue_ticker_wake then
          set_wake := false;
        end if;
      else
        select * into last_tick from pgque.tick
         where tick_queue = q.queue_id order by tick_id desc limit 1;
        exit when not found;
        seq_now := pgque.seq_getval(pgque._queue_sequence(q.queue_id, 'id'));
        fresh := seq_now - last_tick.tick_event_seq;
        age := pg_catalog.now() - last_tick.tick_time;
        if q.queue_ticker_wake
           and (i_woken is null or coalesce(q.queue_name = any(i_woken), false)) then
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
          if age < i_quiet then
            defer := true;
          elsif busy then
            -- events coming faster than i_max_rate: its producers stop notifying
            set_wake := false;
          elsif pgque._tick_untaken(q.queue_id, last_tick.tick_id) then
            -- a live consumer has not taken the newest tick yet: wait for it, so a slow
            -- consumer gets fewer, larger batches instead of a backlog of tiny ones
            defer := true;
          else
            make_tick := true;
          end if;
        end if;
        if not (q.queue_ticker_wake and set_wake is null) then
          -- not armed (or just disarmed). A consumer is near when it has taken the last
          -- tick or the one before: it waits, or the batch it works on or takes next ends
          -- there, so a tick made now is ready when it asks
          select * into prev_tick from pgque.tick
           where tick_queue = q.queue_id and tick_id < last_tick.tick_id
           order by tick_id desc limit 1;
          near := i_busy_interval is not null
                  and pgque._tick_taken(q.queue_id, coalesce(prev_tick.tick_id, last_tick.tick_id));
          if fresh > 0 then
            if near then
              if age >= i_busy_interval then
                make_tick := true;
              else
                due := i_busy_interval - age;
              end if;
            elsif i_busy_interval is not null and prev_tick.tick_id is not null
                  and pgque._tick_taken_next(q.queue_id, prev_tick.tick_id) then
              -- a live consumer one tick short of near: look again once the interval has
              -- run out, then every quiet interval until it is near. One further behind is
              -- left alone (no calls while it catches up): the batch that makes it near
              -- wakes the ticker (_wake_ticker_near)
              due := case when age < i_busy_interval then i_busy_interval - age
                          else least(i_quiet, i_busy_interval) end;
            end if;
          elsif near and last_tick.tick_event_seq
                         > coalesce(prev_tick.tick_event_seq, last_tick.tick_event_seq) then
            -- the last tick had events, a consumer is near: the trailing tick takes those
            -- whose producers were still open at it
            if age >= trail_after then
              make_tick := true;
            else
              due := trail_after - age;
            end if;
          elsif age >= i_quiet then
            set_wake := true;
          else
            due := i_quiet - age;
          end if;
        end if;
      end if;
      if defer then
        deferred := deferred || q.queue_name;
        exit;
      end if;
      if set_wake is null and not make_tick then
        next_in := least(next_in, due);
        exit;
      end if;
      continue when not locked;
      if set_wake is not null then
        update pgque.queue set queue_ticker_wake = set_wake where queue_id = q.queue_id;
      end if;
      if make_tick then
        new_tick := pg_catalog.nextval(pgque._queue_sequence(q.queue_id, 'tick')::regclass);
        insert into pgque.tick (tick_queue, tick_id, tick_event_seq)
        values (q.queue_id, new_tick, seq_now);
        perform pg_catalog.pg_notify('pgque_' || q.queue_name, new_tick::text);
        ticks := ticks + 1;
      end if;
      if not coalesce(set_wake, q.queue_ticker_wake) then
        -- not armed now: it needs a look once its quiet or busy interval has run out
        next_in := least(next_in, due,
                                    case when make_tick then least(i_quiet, i_busy_interval) end);
      end if;
    end loop;
  end loop;
end;
$$;
