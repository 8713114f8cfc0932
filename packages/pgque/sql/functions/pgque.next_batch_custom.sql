-- next_batch_custom: open the consumer's next batch, the events committed between its
-- cursor tick and the next tick. An open batch is returned again, not replaced.
-- Cooperative rows are refused here: groups allocate through the subconsumer forms.
-- params: queue, consumer, and optional min_lag / min_count / min_interval conditions.
-- A batch that brings the consumer near the newest tick wakes the leader ticker
-- (_wake_ticker_near), so a busy queue's next tick is made for it at once.
-- returns: batch id (NULL when no batch is ready) and the two ticks' id, time and seq.
-- tables: subscription (row lock), tick, queue.
create or replace function pgque.next_batch_custom(
  i_queue_name text, i_consumer_name text,
  i_min_lag interval, i_min_count int4, i_min_interval interval,
  out batch_id int8, out cur_tick_id int8, out prev_tick_id int8,
  out cur_tick_time timestamptz, out prev_tick_time timestamptz,
  out cur_tick_event_seq int8, out prev_tick_event_seq int8)
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  sub pgque.subscription;
  prev pgque.tick;
  cur pgque.tick;
begin
  select s.* into sub
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
   where q.queue_name = i_queue_name and c.co_name = i_consumer_name
     for update of s;
  if not found then
    raise exception 'Not subscriber to queue: %/%', i_queue_name, i_consumer_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ002';
  end if;
  if sub.sub_role = 'coop_member' then
    raise exception 'consumer % on queue % is a cooperative subconsumer; use receive_coop / next_batch (cooperative form) instead of the legacy 5-arg next_batch_custom',
      i_consumer_name, i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
  end if;
  if sub.sub_role = 'coop_main' and exists (
       select 1 from pgque.subscription m
        where m.sub_queue = sub.sub_queue and m.sub_id = sub.sub_id and m.sub_role = 'coop_member') then
    raise exception 'consumer % on queue % is a cooperative main consumer; use cooperative receive/next_batch with a subconsumer',
      i_consumer_name, i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
  end if;

  select * into prev from pgque.tick where tick_queue = sub.sub_queue and tick_id = sub.sub_last_tick;
  if not found then
    raise exception 'PgQ corruption: Consumer % on queue % does not see tick %',
      i_consumer_name, i_queue_name, sub.sub_last_tick using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ009';
  end if;

  if sub.sub_batch is not null then
    select * into cur from pgque.tick where tick_queue = sub.sub_queue and tick_id = sub.sub_next_tick;
    batch_id := sub.sub_batch;
  else
    cur := pgque._next_tick(sub.sub_queue, prev, i_min_lag, i_min_count, i_min_interval);
    if cur.tick_id is null then
      return;
    end if;
    batch_id := pg_catalog.nextval('pgque.batch_id_seq');
    update pgque.subscription
       set sub_batch = batch_id, sub_next_tick = cur.tick_id, sub_active = pg_catalog.now()
     where sub_queue = sub.sub_queue and sub_consumer = sub.sub_consumer and sub_role = 'normal';
    perform pgque._wake_ticker_near(sub.sub_queue, prev.tick_id, cur.tick_id);
  end if;

  cur_tick_id := cur.tick_id;
  prev_tick_id := prev.tick_id;
  cur_tick_time := cur.tick_time;
  prev_tick_time := prev.tick_time;
  cur_tick_event_seq := cur.tick_event_seq;
  prev_tick_event_seq := prev.tick_event_seq;
end;
$$;

-- next_batch_custom (cooperative): give subconsumer S of group C a batch. S keeps the
-- batch it already holds; otherwise it takes over the batch of a sibling silent for
-- longer than i_dead_interval (under a fresh id, so the old token goes stale; logged in
-- pgque.coop_takeover); otherwise it gets the group's next tick window, and the group
-- cursor moves past it at once.
-- Paged groups (set_consumer_config coop_page_size): a window larger than a page is cut
-- into pages of consecutive ev_ids when it is opened; members claim pages one at a time,
-- each under its own batch id, fenced and taken over like a batch. Allocations alternate
-- between opening the next window and serving pages of open windows, so a huge window
-- neither blocks small ones behind it nor starves behind them.
-- Lock order: consumer rows and main subscription, then the member, then a victim
-- (SKIP LOCKED), so two members asking at once never deadlock nor share a batch.
-- A window that brings the group near the newest tick wakes the leader ticker
-- (_wake_ticker_near), as a normal consumer's batch does.
-- returns: batch id (NULL when nothing is ready) and the window's ticks.
-- tables: subscription, consumer, tick, coop_window, coop_takeover, queue.
create or replace function pgque.next_batch_custom(
  i_queue text, i_consumer text, i_subconsumer text,
  i_min_lag interval, i_min_count int4, i_min_interval interval,
  i_dead_interval interval default null,
  out batch_id bigint, out prev_tick_id bigint, out next_tick_id bigint)
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  main pgque.subscription;
  member pgque.subscription;
  victim pgque.subscription;
  prev pgque.tick;
  cur pgque.tick;
  open_window pgque.coop_window;
  bounds bigint[];
  window_events bigint;
  page_after bigint;
  page_through bigint;
  page_no int4;
  victim_name text;
begin
  perform pgque._validate_coop_names(i_queue, i_consumer, i_subconsumer);
  for attempt in 1 .. 2 loop
    select s.* into main
      from pgque.subscription s
      join pgque.queue q on q.queue_id = s.sub_queue
      join pgque.consumer c on c.co_id = s.sub_consumer
     where q.queue_name = i_queue and c.co_name = i_consumer and s.sub_role = 'coop_main'
       for update of s;
    if found then
      select s.* into member
        from pgque.subscription s
        join pgque.consumer c on c.co_id = s.sub_consumer
       where s.sub_queue = main.sub_queue and c.co_name = i_consumer || '.' || i_subconsumer
         and s.sub_role = 'coop_member' and s.sub_id = main.sub_id
         for update of s;
      exit when found;
    end if;
    -- first call of this member (or of the group): register, then look again. Known
    -- members skip this, so a poll costs two row locks, not a registration.
    exit when attempt = 2;
    perform pgque.register_subconsumer(i_queue, i_consumer, i_subconsumer, false);
  end loop;
  if main.sub_queue is null then
    raise exception 'cooperative main consumer not found: %/%', i_queue, i_consumer using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ002';
  end if;
  if member.sub_queue is null then
    raise exception 'cooperative subconsumer not found: %/%/%', i_queue, i_consumer, i_subconsumer using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ002';
  end if;

  if member.sub_batch is not null then
    update pgque.subscription set sub_active = pg_catalog.now()
     where sub_queue = member.sub_queue and sub_consumer = member.sub_consumer;
    batch_id := member.sub_batch;
    prev_tick_id := member.sub_last_tick;
    next_tick_id := member.sub_next_tick;
    return;
  end if;

  if i_dead_interval is not null then
    select * into victim from pgque.subscription
     where sub_queue = main.sub_queue and sub_id = main.sub_id and sub_role = 'coop_member'
       and sub_consumer <> member.sub_consumer
       and sub_batch is not null
       and sub_active < pg_catalog.now() - i_dead_interval
     order by sub_active, sub_consumer
     limit 1
     for update skip locked;
    if found then
      perform pgque._clear_member_cursor(victim.sub_queue, victim.sub_consumer);
      batch_id := pg_catalog.nextval('pgque.batch_id_seq');
      update pgque.subscription
         set sub_last_tick = victim.sub_last_tick, sub_next_tick = victim.sub_next_tick,
             sub_batch = batch_id, sub_active = pg_catalog.now(),
             sub_page_after = victim.sub_page_after, sub_page_through = victim.sub_page_through,
             sub_page_no = victim.sub_page_no
       where sub_queue = member.sub_queue and sub_consumer = member.sub_consumer;
      select co_name into victim_name from pgque.consumer where co_id = victim.sub_consumer;
      insert into pgque.coop_takeover (ct_queue, ct_consumer, ct_old_subconsumer, ct_new_subconsumer,
                                       ct_old_batch, ct_new_batch, ct_silent_for)
      values (main.sub_queue, i_consumer, pg_catalog.substr(victim_name, pg_catalog.length(i_consumer) + 2),
              i_subconsumer, victim.sub_batch, batch_id, pg_catalog.now() - victim.sub_active);
      prev_tick_id := victim.sub_last_tick;
      next_tick_id := victim.sub_next_tick;
      return;
    end if;
  end if;

  if main.sub_batch is not null or main.sub_next_tick is not null then
    raise exception 'cooperative main consumer %/% has an unexpected active batch %',
      i_queue, i_consumer, main.sub_batch using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
  end if;
  select * into prev from pgque.tick where tick_queue = main.sub_queue and tick_id = main.sub_last_tick;
  if not found then
    raise exception 'PgQ corruption: cooperative consumer % on queue % does not see tick %',
      i_consumer, i_queue, main.sub_last_tick using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ009';
  end if;
  cur := pgque._next_tick(main.sub_queue, prev, i_min_lag, i_min_count, i_min_interval);

  if main.sub_page_size is not null then
    select * into open_window from pgque.coop_window
     where cw_queue = main.sub_queue and cw_sub_id = main.sub_id
     order by cw_next_tick limit 1;
    -- empty windows of a paged group are skipped, not handed out: a member must not come
    -- back empty-handed while an open window still has pages
    loop
      exit when cur.tick_id is null
             or (open_window.cw_next_tick is not null and main.sub_last_claim_new);
      execute pg_catalog.format(
        'select pg_catalog.count(*), pg_catalog.array_agg(ev_id order by ev_id) filter (where rn %% %s = 0 and rn < total)'
        '  from (select ev_id, pg_catalog.row_number() over (order by ev_id) as rn,'
        '               pg_catalog.count(*) over () as total'
        '          from (%s) w) x',
        main.sub_page_size,
        pgque._window_event_sql(main.sub_queue, main.sub_id, prev.tick_id, cur.tick_id))
        into window_events, bounds;
      exit when window_events > 0;
      update pgque.subscription set sub_last_tick = cur.tick_id
       where sub_queue = main.sub_queue and sub_consumer = main.sub_consumer;
      prev := cur;
      cur := pgque._next_tick(main.sub_queue, prev, i_min_lag, i_min_count, i_min_interval);
    end loop;

    if open_window.cw_next_tick is not null and (cur.tick_id is null or main.sub_last_claim_new) then
      -- serve the next page of the oldest open window
      page_no := open_window.cw_next_page;
      page_after := open_window.cw_bounds[page_no - 1];
      page_through := open_window.cw_bounds[page_no];
      if page_no > coalesce(pg_catalog.array_length(open_window.cw_bounds, 1), 0) then
        delete from pgque.coop_window
         where cw_queue = open_window.cw_queue and cw_sub_id = open_window.cw_sub_id
           and cw_next_tick = open_window.cw_next_tick;
      else
        update pgque.coop_window set cw_next_page = page_no + 1
         where cw_queue = open_window.cw_queue and cw_sub_id = open_window.cw_sub_id
           and cw_next_tick = open_window.cw_next_tick;
      end if;
      update pgque.subscription set sub_last_claim_new = false, sub_active = pg_catalog.now()
       where sub_queue = main.sub_queue and sub_consumer = main.sub_consumer;
      select * into prev from pgque.tick where tick_queue = main.sub_queue and tick_id = open_window.cw_prev_tick;
      select * into cur from pgque.tick where tick_queue = main.sub_queue and tick_id = open_window.cw_next_tick;
    elsif cur.tick_id is not null then
      -- open the next window (not empty), cut into pages when it is larger than one
      if bounds is not null then
        insert into pgque.coop_window (cw_queue, cw_sub_id, cw_prev_tick, cw_next_tick, cw_bounds, cw_next_page)
        values (main.sub_queue, main.sub_id, prev.tick_id, cur.tick_id, bounds, 2);
        page_no := 1;
        page_through := bounds[1];
      end if;
      update pgque.subscription
         set sub_last_tick = cur.tick_id, sub_active = pg_catalog.now(),
             sub_last_claim_new = open_window.cw_next_tick is not null or bounds is not null
       where sub_queue = main.sub_queue and sub_consumer = main.sub_consumer;
    else
      perform pgque._touch_member(member.sub_queue, member.sub_consumer);
      return;
    end if;
  else
    if cur.tick_id is null then
      perform pgque._touch_member(member.sub_queue, member.sub_consumer);
      return;
    end if;
    update pgque.subscription
       set sub_last_tick = cur.tick_id, sub_active = pg_catalog.now()
     where sub_queue = main.sub_queue and sub_consumer = main.sub_consumer;
  end if;

  perform pgque._wake_ticker_near(main.sub_queue, main.sub_last_tick,
                                  (select s.sub_last_tick from pgque.subscription s
                                    where s.sub_queue = main.sub_queue
                                      and s.sub_consumer = main.sub_consumer));
  batch_id := pg_catalog.nextval('pgque.batch_id_seq');
  update pgque.subscription
     set sub_last_tick = prev.tick_id, sub_next_tick = cur.tick_id, sub_batch = batch_id,
         sub_active = pg_catalog.now(),
         sub_page_after = page_after, sub_page_through = page_through, sub_page_no = page_no
   where sub_queue = member.sub_queue and sub_consumer = member.sub_consumer;
  prev_tick_id := prev.tick_id;
  next_tick_id := cur.tick_id;
end;
$$;
