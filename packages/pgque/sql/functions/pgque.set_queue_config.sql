-- set_queue_config: change one queue parameter; a NULL value restores its default.
-- params: queue name; parameter, with or without the queue_ prefix (ticker_max_count,
-- ticker_max_lag, ticker_idle_period, ticker_paused, rotation_period, external_ticker,
-- max_retries); value as text. returns: 1. tables: queue.
create or replace function pgque.set_queue_config(x_queue_name text, x_param_name text, x_param_value text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  param text;
  col text;
begin
  if x_queue_name is null or x_param_name is null then
    raise exception 'Invalid NULL value' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  param := pg_catalog.regexp_replace(pg_catalog.lower(x_param_name), '^queue_', '');
  if param not in ('ticker_max_count', 'ticker_max_lag', 'ticker_idle_period', 'ticker_paused',
                   'rotation_period', 'external_ticker', 'max_retries') then
    raise exception 'cannot change parameter "%s"', x_param_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  perform 1 from pgque.queue where queue_name = x_queue_name for update;
  if not found then
    raise exception 'No such event queue' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  col := 'queue_' || param;

  if x_param_value is null then
    execute pg_catalog.format('update pgque.queue set %I = default where queue_name = $1', col)
      using x_queue_name;
    return 1;
  end if;

  if param = 'ticker_max_count' and x_param_value::int4 <= 0 then
    raise exception 'set_queue_config: ticker_max_count must be > 0, got %', x_param_value using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  elsif param = 'max_retries' and x_param_value::int4 < 0 then
    raise exception 'set_queue_config: max_retries must be >= 0, got %', x_param_value using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  elsif param in ('ticker_max_lag', 'ticker_idle_period', 'rotation_period')
        and x_param_value::interval <= '0'::interval then
    raise exception 'set_queue_config: % must be > 0, got %', param, x_param_value using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  execute pg_catalog.format(
    'update pgque.queue set %I = $2::%s where queue_name = $1', col,
    case
      when param in ('ticker_max_count', 'max_retries') then 'int4'
      when param in ('ticker_paused', 'external_ticker') then 'bool'
      else 'interval'
    end)
    using x_queue_name, x_param_value;
  return 1;
end;
$$;
