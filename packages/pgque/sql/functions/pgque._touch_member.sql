-- _touch_member: mark a member as seen now (an allocation that found nothing to hand out
-- still proves it alive; idle siblings are never touched).
create or replace function pgque._touch_member(i_queue_id int4, i_consumer_id int4)
returns void
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  update pgque.subscription set sub_active = pg_catalog.now()
   where sub_queue = i_queue_id and sub_consumer = i_consumer_id and sub_role = 'coop_member';
$$;
