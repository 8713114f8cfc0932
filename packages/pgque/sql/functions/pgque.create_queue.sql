-- create_queue: a queue is a row, an id and a tick sequence, and ntables inheritance
-- children of pgque.event_<id> that rotate; it is ticked once so consumers can register.
-- params: queue name (at most 57 bytes: pgque_<name> must fit a NOTIFY channel).
-- returns: 1 when created, 0 when it already existed.
-- tables: queue, tick, new pgque.event_<id>*; function pgque._write_event (remade).
create or replace function pgque.create_queue(i_queue_name text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  parent text;
  id_seq text;
  tick_seq text;
  n int;
  child text;
begin
  if i_queue_name is null then
    raise exception 'Invalid NULL value' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if i_queue_name = '' then
    raise exception 'queue name must not be empty' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if pg_catalog.octet_length(i_queue_name) > 57 then
    raise exception 'queue name too long: % bytes (max 57). The NOTIFY channel pgque_<name> must fit in 63 bytes',
      pg_catalog.octet_length(i_queue_name) using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  -- serialise creators of the same name so a race answers 0, not a unique violation
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('pgque.create_queue'), pg_catalog.hashtext(i_queue_name));
  if exists (select 1 from pgque.queue where queue_name = i_queue_name) then
    return 0;
  end if;

  qid := pg_catalog.nextval('pgque.queue_queue_id_seq');
  -- every name below is derived from qid alone; the queue row keeps copies for PgQue
  -- compatibility, but the engine never reads them back into SQL
  parent := pgque._event_table(qid);
  id_seq := pgque._queue_sequence(qid, 'id');
  tick_seq := pgque._queue_sequence(qid, 'tick');
  insert into pgque.queue (queue_id, queue_name, queue_data_pfx, queue_event_seq, queue_tick_seq)
  values (qid, i_queue_name, parent, id_seq, tick_seq);

  execute pg_catalog.format('create sequence %s', id_seq);
  execute pg_catalog.format('create sequence %s', tick_seq);
  execute pg_catalog.format('create table %s () inherits (pgque.event_template)', parent);
  for n in 0 .. 2 loop
    child := pgque._event_table(qid, n);
    execute pg_catalog.format('create table %s () inherits (%s)', child, parent);
    execute pg_catalog.format('alter table %s alter column ev_id set default pg_catalog.nextval(%L)',
      child, id_seq);
    -- (ev_txid, ev_id): batches scan by transaction id; a page of one big transaction
    -- also seeks to its ev_id range instead of reading the whole window
    execute pg_catalog.format('create index %I on %s (ev_txid, ev_id)', 'event_' || qid || '_' || n || '_txid_idx', child);
  end loop;
  perform pgque._create_event_writers();

  perform pgque.tune_storage(i_queue_name);
  perform pgque.grant_perms(i_queue_name);
  perform pgque.ticker(i_queue_name);
  return 1;
end;
$$;
