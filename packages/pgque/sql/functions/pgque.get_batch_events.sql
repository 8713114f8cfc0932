-- get_batch_events: the events of a batch, ordered by ev_id. Security definer (unlike
-- upstream), so a role holding only pgque_reader can call it directly.
-- params: batch id. returns: event rows. errors: batch not found: <id>.
create or replace function pgque.get_batch_events(
  x_batch_id bigint,
  out ev_id bigint, out ev_time timestamptz, out ev_txid bigint, out ev_retry int4,
  out ev_type text, out ev_data text,
  out ev_extra1 text, out ev_extra2 text, out ev_extra3 text, out ev_extra4 text)
returns setof record
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return query execute pgque.batch_event_sql(x_batch_id);
end;
$$;
