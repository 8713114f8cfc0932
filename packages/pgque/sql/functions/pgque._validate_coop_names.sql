-- _validate_coop_names: queue, consumer and subconsumer names must be non-empty, and the
-- consumer and subconsumer dot-free, so the member name <consumer>.<subconsumer> is
-- unambiguous. raises on the first bad name.
create or replace function pgque._validate_coop_names(i_queue text, i_consumer text, i_subconsumer text)
returns void
language plpgsql
immutable
as $$
begin
  if i_queue is null or i_queue = '' then
    raise exception 'queue name must not be empty' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if i_consumer is null or i_consumer = '' then
    raise exception 'consumer name must not be empty' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if i_subconsumer is null or i_subconsumer = '' then
    raise exception 'subconsumer name must not be empty' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if pg_catalog.strpos(i_consumer, '.') > 0 then
    raise exception 'cooperative consumer name must not contain dot: %', i_consumer using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if pg_catalog.strpos(i_subconsumer, '.') > 0 then
    raise exception 'cooperative subconsumer name must not contain dot: %', i_subconsumer using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
end;
$$;
