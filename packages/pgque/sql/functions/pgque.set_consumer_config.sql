-- set_consumer_config: change one setting of a consumer (an extension beyond PgQue 0.2).
-- params: queue, consumer (for a cooperative group: its name, not a member's), parameter,
-- value as text; a NULL value restores the default.
--   coop_page_size: when the consumer is (or becomes) a cooperative group, hand its windows
--   out in pages of at most this many events instead of whole windows. Default NULL (off).
-- returns: 1. tables: subscription.
create or replace function pgque.set_consumer_config(
  i_queue_name text, i_consumer_name text, i_param_name text, i_param_value text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  sub pgque.subscription;
  page_size int4;
begin
  if i_queue_name is null or i_consumer_name is null or i_param_name is null then
    raise exception 'Invalid NULL value' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if i_param_name <> 'coop_page_size' then
    raise exception 'set_consumer_config: unknown parameter "%" (known: coop_page_size)', i_param_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select s.* into sub
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
   where q.queue_name = i_queue_name and c.co_name = i_consumer_name
     for update of s;
  if not found then
    raise exception 'Not subscriber to queue: %/%', i_queue_name, i_consumer_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ002';
  end if;
  if sub.sub_role = 'coop_member' then
    raise exception 'set_consumer_config: % is a cooperative subconsumer; configure its group', i_consumer_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if i_param_value is not null then
    if i_param_value !~ '^\s*[0-9]{1,9}\s*$' or i_param_value::int4 < 1 then
      raise exception 'set_consumer_config: coop_page_size must be a positive integer, got %', i_param_value using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
    end if;
    page_size := i_param_value::int4;
  end if;
  update pgque.subscription set sub_page_size = page_size
   where sub_queue = sub.sub_queue and sub_consumer = sub.sub_consumer;
  return 1;
end;
$$;
