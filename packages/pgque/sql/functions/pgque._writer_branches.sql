-- _writer_branches: the PL/pgSQL text that picks one statement per event table of the given
-- queues, for the body of pgque._write_event (see _create_event_writers): a binary search
-- on i_queue_id (nested IFs, so a call compares O(log n) ids, not n), then one branch per
-- table number. A call whose queue or table is not listed falls through every IF.
-- params: i_queues, queue ids in ascending order; i_tables, each queue's number of event
-- tables; i_statement, a format() template whose %1$s is the table (pgque._event_table)
-- and %2$s the queue's id sequence (pgque._queue_sequence), both quoted identifiers.
-- returns: the text (empty for no queues). tables: none.
create or replace function pgque._writer_branches(
  i_queues int4[], i_tables int4[], i_statement text)
returns text
language plpgsql
immutable
as $$
declare
  n int := coalesce(pg_catalog.cardinality(i_queues), 0);
  mid int;
  k int;
  t int;
  branches text := '';
begin
  if n = 0 then
    return '';
  end if;
  if n > 4 then
    mid := n / 2 + 1;
    return pg_catalog.format(E'if i_queue_id < %s then\n%s\nelse\n%s\nend if;', i_queues[mid],
      pgque._writer_branches(i_queues[1:mid - 1], i_tables[1:mid - 1], i_statement),
      pgque._writer_branches(i_queues[mid:n], i_tables[mid:n], i_statement));
  end if;
  for k in 1 .. n loop
    branches := branches || pg_catalog.format(E'%s i_queue_id = %s then\n',
      case when k = 1 then 'if' else 'elsif' end, i_queues[k]);
    for t in 0 .. i_tables[k] - 1 loop
      branches := branches || pg_catalog.format(E'  %s i_table = %s then\n    %s\n',
        case when t = 0 then 'if' else 'elsif' end, t,
        pg_catalog.format(i_statement, pgque._event_table(i_queues[k], t),
                          pgque._queue_sequence(i_queues[k], 'id')));
    end loop;
    branches := branches || E'  end if;\n';
  end loop;
  return branches || 'end if;';
end;
$$;
