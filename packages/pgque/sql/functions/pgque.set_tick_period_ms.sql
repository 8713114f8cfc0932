-- set_tick_period_ms: how often ticker_loop checks the queues within its one-second slot.
-- params: an exact divisor of 1000 in 1..1000. returns: the value stored. tables: config.
create or replace function pgque.set_tick_period_ms(i_period_ms integer)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  if i_period_ms is null or i_period_ms < 1 or i_period_ms > 1000 or 1000 % i_period_ms <> 0 then
    raise exception 'tick_period_ms must be an exact divisor of 1000 between 1 and 1000 (got %)', i_period_ms using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  update pgque.config set tick_period_ms = i_period_ms;
  return i_period_ms;
end;
$$;
