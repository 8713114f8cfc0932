-- send_idem: publish one event at most once per (queue, idem_key) while the key's claim
-- lives (PgQue 0.3's producer idempotency). The first call claims the key for `ttl` and
-- appends the event; a call with the same key before the claim expires appends nothing
-- and answers the first event's id with deduped = true. Type, payload, TTL and partition
-- key of a duplicate are not compared, and a duplicate does not extend the claim. After
-- expiry the key starts a new claim and appends again (maint_idem only frees the space).
-- The claim and the event are written in the caller's transaction: a rollback undoes
-- both; producers racing on one key serialise on its claim, and one of them appends.
-- The event id is drawn before the claim, so the claim row is written once, never updated
-- in the same call. The first idempotent send on a queue adds pgque.maint_idem to its
-- maintenance hooks (queue_extra_maint), so maint() expires its keys.
-- params: queue_name, type_name, payload (text verbatim, or jsonb stored canonical),
-- idem_key (not NULL), ttl (default 1 hour, positive and finite), partition_key (see send).
-- returns: one row (event_id, deduped).
-- tables: idem, queue (its hooks, once), the queue's current event table.
-- errors: PQ010 NULL idem_key, bad ttl; queue not found; Insert into queue disallowed.
create or replace function pgque.send_idem(
  queue_name text, type_name text, payload text, idem_key text,
  ttl interval default '1 hour', partition_key text default null,
  out event_id bigint, out deduped boolean)
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  w record;
  drawn bigint;
  claimed bigint;
  hooked boolean;
begin
  if send_idem.idem_key is null then
    raise exception 'idem_key must not be null'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if send_idem.ttl is null or send_idem.ttl <= interval '0' or not pg_catalog.isfinite(send_idem.ttl) then
    raise exception 'ttl must be a positive finite interval, got %', coalesce(send_idem.ttl::text, 'NULL')
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select * into w from pgque._writer_table(send_idem.queue_name);
  if w.insert_disabled then
    raise exception 'Insert into queue disallowed'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ006';
  end if;

  -- the live claim, if any, and whether the queue's maintenance runs maint_idem yet
  select (select i.ev_id from pgque.idem i
           where i.queue_id = q.queue_id and i.idem_key = send_idem.idem_key
             and i.expires_at > pg_catalog.now()),
         coalesce('pgque.maint_idem' = any (q.queue_extra_maint), false)
    into claimed, hooked
    from pgque.queue q
   where q.queue_id = w.queue_id;
  if claimed is not null then
    event_id := claimed;
    deduped := true;
    return;
  end if;

  drawn := pg_catalog.nextval(pgque._queue_sequence(w.queue_id, 'id')::regclass);
  -- an expired claim is taken over in place; a live one (committed by a racing producer
  -- since the look-up above) is left alone and answered
  insert into pgque.idem as i (queue_id, idem_key, ev_id, expires_at)
  values (w.queue_id, send_idem.idem_key, drawn, pg_catalog.now() + send_idem.ttl)
  on conflict on constraint idem_pkey do update
     set ev_id = excluded.ev_id, expires_at = excluded.expires_at
   where i.expires_at <= pg_catalog.now()
  returning i.ev_id into claimed;
  if claimed is null then
    select i.ev_id into claimed from pgque.idem i
     where i.queue_id = w.queue_id and i.idem_key = send_idem.idem_key;
    event_id := claimed;
    deduped := true;
    return;
  end if;

  perform pgque._write_event(w.queue_id, w.cur_table, drawn, send_idem.type_name, send_idem.payload,
                             send_idem.partition_key);
  if not hooked then
    update pgque.queue q
       set queue_extra_maint = pg_catalog.array_append(coalesce(q.queue_extra_maint, '{}'), 'pgque.maint_idem')
     where q.queue_id = w.queue_id
       and not ('pgque.maint_idem' = any (coalesce(q.queue_extra_maint, '{}')));
  end if;
  event_id := drawn;
  deduped := false;
end;
$$;

create or replace function pgque.send_idem(
  queue_name text, type_name text, payload jsonb, idem_key text,
  ttl interval default '1 hour', partition_key text default null,
  out event_id bigint, out deduped boolean)
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select * from pgque.send_idem(queue_name, type_name, payload::text, idem_key, ttl, partition_key);
$$;
