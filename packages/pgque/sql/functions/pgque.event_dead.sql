-- event_dead: move one event of a batch to the dead-letter table. A cooperative
-- member's dead letters belong to the group's main consumer, so they outlive members.
-- Idempotent per (queue, consumer, event). returns: 1. tables: dead_letter.
create or replace function pgque.event_dead(
  i_batch_id bigint, i_event_id bigint, i_reason text, i_ev_time timestamptz, i_ev_txid xid8,
  i_ev_retry int4, i_ev_type text, i_ev_data text,
  i_ev_extra1 text default null, i_ev_extra2 text default null,
  i_ev_extra3 text default null, i_ev_extra4 text default null)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  owner record;
  consumer_id int4;
begin
  select * into owner from pgque._batch_subscription(i_batch_id);
  consumer_id := owner.sub_consumer;
  if owner.sub_role = 'coop_member' then
    select m.sub_consumer into consumer_id
      from pgque.subscription m
     where m.sub_queue = owner.sub_queue and m.sub_id = owner.sub_id and m.sub_role = 'coop_main';
  end if;
  insert into pgque.dead_letter (dl_queue_id, dl_consumer_id, dl_reason, ev_id, ev_time, ev_txid, ev_retry,
                                 ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)
  values (owner.sub_queue, consumer_id, i_reason, i_event_id, i_ev_time, i_ev_txid, i_ev_retry,
          i_ev_type, i_ev_data, i_ev_extra1, i_ev_extra2, i_ev_extra3, i_ev_extra4)
  on conflict (dl_queue_id, dl_consumer_id, ev_id) do nothing;
  return 1;
end;
$$;
