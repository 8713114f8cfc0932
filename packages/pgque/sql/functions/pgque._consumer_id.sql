-- _consumer_id: the id of a consumer name, created when missing, and key-share locked so
-- it cannot be deleted before the caller commits. Race-free: two first
-- registrations of one name both end with the same row, neither fails.
-- params: consumer name. returns: co_id. tables: consumer.
create or replace function pgque._consumer_id(i_consumer_name text)
returns int4
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  id int4;
begin
  loop
    select co_id into id from pgque.consumer where co_name = i_consumer_name for key share;
    if found then
      return id;
    end if;
    insert into pgque.consumer (co_name) values (i_consumer_name)
      on conflict (co_name) do nothing
      returning co_id into id;
    if id is not null then
      return id;
    end if;
  end loop;
end;
$$;
