-- get_batch_cursor: open a NO SCROLL cursor over a batch's events and return the first
-- i_quick_limit of them at once. i_extra_where is spliced in verbatim (admin only).
-- params: batch id, cursor name, quick limit, optional extra condition.
create or replace function pgque.get_batch_cursor(
  i_batch_id bigint, i_cursor_name text, i_quick_limit int4, i_extra_where text,
  out ev_id bigint, out ev_time timestamptz, out ev_txid bigint, out ev_retry int4,
  out ev_type text, out ev_data text,
  out ev_extra1 text, out ev_extra2 text, out ev_extra3 text, out ev_extra4 text)
returns setof record
language plpgsql
as $$
declare
  query text;
  cur refcursor;
  n int4 := 0;
begin
  if i_batch_id is null or i_cursor_name is null or i_quick_limit is null then
    return;
  end if;
  query := pgque.batch_event_sql(i_batch_id);
  if i_extra_where is not null then
    query := 'select * from (' || query || ') b where ' || i_extra_where || ' order by 1';
  end if;
  cur := i_cursor_name;
  open cur no scroll for execute query;
  while n < i_quick_limit loop
    fetch cur into ev_id, ev_time, ev_txid, ev_retry, ev_type, ev_data,
                   ev_extra1, ev_extra2, ev_extra3, ev_extra4;
    exit when not found;
    n := n + 1;
    return next;
  end loop;
end;
$$;

create or replace function pgque.get_batch_cursor(
  i_batch_id bigint, i_cursor_name text, i_quick_limit int4,
  out ev_id bigint, out ev_time timestamptz, out ev_txid bigint, out ev_retry int4,
  out ev_type text, out ev_data text,
  out ev_extra1 text, out ev_extra2 text, out ev_extra3 text, out ev_extra4 text)
returns setof record
language sql
as $$
  select * from pgque.get_batch_cursor(i_batch_id, i_cursor_name, i_quick_limit, null);
$$;
