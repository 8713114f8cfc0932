-- _create_event_writers: (re)makes pgque._write_event, the function send and send_batch
-- hand their rows to once they have picked the table (the rule of _writer_table). Its
-- body holds one static INSERT per event table of every queue (the first 256 by id), so a
-- session plans each INSERT once and reuses the plan; a dynamic INSERT, planned on every
-- call, would cost a single send about a third of its time.
-- * _write_event(queue id, table, type, data text) returns bigint: one row, its id from
--   the table's default.
-- * _write_event(queue id, table, type, data text[]) returns bigint[]: the ids drawn first,
--   one per element, from the queue's sequence (so they are in the input's order by
--   construction), then one INSERT … SELECT of both arrays, no per-row work (cheaper than
--   collecting RETURNING rows).
-- * _write_event(queue id, table, id, type, data, extra1) returns bigint: one row with
--   ev_extra1 (a partition key), its id given (send_idem draws it first) or, when NULL,
--   from the queue's sequence.
-- A queue its text does not name (beyond the first 256; or made by a transaction this one
-- could not see, as a REPEATABLE READ create_queue racing another) gets the same INSERT
-- as dynamic SQL: slower, never wrong. create_queue, drop_queue and every install call
-- this, so the text follows the queues. Calls are serialised (two concurrent replacements
-- of one function would fail). The writer runs with its caller's rights (the engine's
-- security-definer producers) and nobody else may execute it.
-- returns: nothing. tables: queue (read); function pgque._write_event.
create or replace function pgque._create_event_writers()
returns void
language plpgsql
as $$
declare
  queues int4[];
  tables int4[];
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('pgque._create_event_writers'));
  select coalesce(pg_catalog.array_agg(queue_id order by queue_id), '{}'),
         coalesce(pg_catalog.array_agg(queue_ntables order by queue_id), '{}')
    into queues, tables
    from (select queue_id, queue_ntables from pgque.queue order by queue_id limit 256) q;

  execute pg_catalog.format($f$create or replace function pgque._write_event(
  i_queue_id int4, i_table int4, i_type text, i_data text)
returns bigint
language plpgsql
as $w$
declare
  id bigint;
begin
%s
  -- a table this text does not name: the same INSERT, planned for this call
  execute pg_catalog.format('insert into %%s (ev_time, ev_type, ev_data)'
                            ' values (pg_catalog.now(), $1, $2) returning ev_id',
                            pgque._event_table(i_queue_id, i_table))
    into id using i_type, i_data;
  return id;
end
$w$
$f$, pgque._writer_branches(queues, tables,
    'insert into %1$s (ev_time, ev_type, ev_data) values (pg_catalog.now(), i_type, i_data)'
    ' returning ev_id into id; return id;'));

  execute pg_catalog.format($f$create or replace function pgque._write_event(
  i_queue_id int4, i_table int4, i_type text, i_data text[])
returns bigint[]
language plpgsql
as $w$
declare
  ids bigint[];
begin
%s
  -- a table this text does not name: the same INSERT, planned for this call
  ids := array(select pg_catalog.nextval(pgque._queue_sequence(i_queue_id, 'id')::regclass)
                 from pg_catalog.generate_series(1, pg_catalog.cardinality(i_data)));
  execute pg_catalog.format('insert into %%s (ev_id, ev_time, ev_type, ev_data)'
                            ' select u.id, pg_catalog.now(), $1, u.data'
                            ' from rows from (pg_catalog.unnest($2), pg_catalog.unnest($3)) as u(id, data)',
                            pgque._event_table(i_queue_id, i_table))
    using i_type, ids, i_data;
  return ids;
end
$w$
$f$, pgque._writer_branches(queues, tables,
    'ids := array(select pg_catalog.nextval(%2$L::regclass)'
    ' from pg_catalog.generate_series(1, pg_catalog.cardinality(i_data)));'
    ' insert into %1$s (ev_id, ev_time, ev_type, ev_data)'
    ' select u.id, pg_catalog.now(), i_type, u.data from rows from (pg_catalog.unnest(ids), pg_catalog.unnest(i_data)) as u(id, data);'
    ' return ids;'));

  execute pg_catalog.format($f$create or replace function pgque._write_event(
  i_queue_id int4, i_table int4, i_id bigint, i_type text, i_data text, i_extra1 text)
returns bigint
language plpgsql
as $w$
declare
  id bigint;
begin
%s
  -- a table this text does not name: the same INSERT, planned for this call
  execute pg_catalog.format('insert into %%s (ev_id, ev_time, ev_type, ev_data, ev_extra1)'
                            ' values (coalesce($1, pg_catalog.nextval(%%L::regclass)), pg_catalog.now(), $2, $3, $4)'
                            ' returning ev_id',
                            pgque._event_table(i_queue_id, i_table), pgque._queue_sequence(i_queue_id, 'id'))
    into id using i_id, i_type, i_data, i_extra1;
  return id;
end
$w$
$f$, pgque._writer_branches(queues, tables,
    'insert into %1$s (ev_id, ev_time, ev_type, ev_data, ev_extra1)'
    ' values (coalesce(i_id, pg_catalog.nextval(%2$L::regclass)), pg_catalog.now(), i_type, i_data, i_extra1)'
    ' returning ev_id into id; return id;'));

  revoke all on function pgque._write_event(int4, int4, text, text),
                         pgque._write_event(int4, int4, text, text[]),
                         pgque._write_event(int4, int4, bigint, text, text, text) from public;
end;
$$;
