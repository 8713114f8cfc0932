-- register_subconsumer: join subconsumer S to cooperative group C on a queue. The first
-- member creates the group's main row at the newest tick; an existing normal consumer C
-- becomes the main only with i_convert_normal and no open batch. Idempotent.
-- Concurrent first registrations of one group both succeed.
-- returns: 1 when anything was created or converted, 0 when already registered.
-- tables: consumer, subscription, tick.
create or replace function pgque.register_subconsumer(
  i_queue text, i_consumer text, i_subconsumer text, i_convert_normal boolean default false)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  main_cid int4;
  member_cid int4;
  main pgque.subscription;
  member pgque.subscription;
  created int := 0;
  pos bigint;
begin
  perform pgque._validate_coop_names(i_queue, i_consumer, i_subconsumer);
  select queue_id into qid from pgque.queue where queue_name = i_queue;
  if not found then
    raise exception 'Event queue not created yet' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;

  main_cid := pgque._consumer_id(i_consumer);
  loop
    select * into main from pgque.subscription
     where sub_queue = qid and sub_consumer = main_cid for update;
    exit when found;
    pos := (select max(tick_id) from pgque.tick where tick_queue = qid);
    if pos is null then
      raise exception 'No ticks for this queue.  Please run ticker on database.' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
    end if;
    insert into pgque.subscription (sub_queue, sub_consumer, sub_last_tick, sub_role)
    values (qid, main_cid, pos, 'coop_main')
    on conflict (sub_queue, sub_consumer) do nothing;
    if found then
      created := 1;
    end if;
  end loop;

  if main.sub_role = 'normal' then
    if not coalesce(i_convert_normal, false) then
      raise exception 'consumer % on queue % is already a normal consumer; explicit conversion is required',
        i_consumer, i_queue using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
    end if;
    if main.sub_batch is not null then
      raise exception 'cannot convert active normal consumer % on queue % to cooperative main',
        i_consumer, i_queue using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
    end if;
    update pgque.subscription set sub_role = 'coop_main'
     where sub_queue = qid and sub_consumer = main_cid;
    created := 1;
  elsif main.sub_role <> 'coop_main' then
    raise exception 'consumer % on queue % is not a cooperative main consumer', i_consumer, i_queue using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
  end if;

  member_cid := pgque._consumer_id(i_consumer || '.' || i_subconsumer);
  select * into member from pgque.subscription
   where sub_queue = qid and sub_consumer = member_cid for update;
  if found then
    if member.sub_role <> 'coop_member' or member.sub_id <> main.sub_id then
      raise exception 'consumer name % on queue % is already registered incompatibly',
        i_consumer || '.' || i_subconsumer, i_queue using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ008';
    end if;
    update pgque.subscription set sub_active = pg_catalog.now()
     where sub_queue = qid and sub_consumer = member_cid;
    return created;
  end if;
  insert into pgque.subscription (sub_id, sub_queue, sub_consumer, sub_role)
  values (main.sub_id, qid, member_cid, 'coop_member');
  return 1;
end;
$$;
