-- _remove_member: delete an idle member row and its consumer row when that has no other
-- subscription; demote the group's main to a normal consumer when it was the last one.
create or replace function pgque._remove_member(i_queue_id int4, i_consumer_id int4, i_sub_id int4)
returns void
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  delete from pgque.subscription
   where sub_queue = i_queue_id and sub_consumer = i_consumer_id and sub_role = 'coop_member';
  delete from pgque.consumer c
   where c.co_id = i_consumer_id
     and not exists (select 1 from pgque.subscription s where s.sub_consumer = c.co_id);
  if not exists (select 1 from pgque.subscription
                  where sub_queue = i_queue_id and sub_id = i_sub_id and sub_role = 'coop_member') then
    -- Pages of open windows that no member took yet must not be lost to the normal
    -- consumer the group becomes: its cursor goes back to the oldest open window (pages
    -- already handed out there are delivered again; handlers must be idempotent anyway).
    with gone as (
      delete from pgque.coop_window where cw_queue = i_queue_id and cw_sub_id = i_sub_id
      returning cw_prev_tick
    )
    update pgque.subscription
       set sub_role = 'normal', sub_active = pg_catalog.now(), sub_last_claim_new = false,
           sub_last_tick = coalesce((select min(cw_prev_tick) from gone), sub_last_tick)
     where sub_queue = i_queue_id and sub_id = i_sub_id and sub_role = 'coop_main';
  end if;
end;
$$;
