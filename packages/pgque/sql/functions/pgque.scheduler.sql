-- set_tick_period_ms: how often ticker_loop checks the queues within its one-second slot.
-- params: an exact divisor of 1000 in 1..1000. returns: the value stored. tables: config.
create or replace function pgque.set_tick_period_ms(p_period_ms integer)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  if p_period_ms is null or p_period_ms < 1 or p_period_ms > 1000 or 1000 % p_period_ms <> 0 then
    raise exception 'tick_period_ms must be an exact divisor of 1000 between 1 and 1000 (got %)', p_period_ms using errcode = 'PQ010';
  end if;
  update pgque.config set tick_period_ms = p_period_ms;
  return p_period_ms;
end;
$$;

-- ticker_loop: one second of ticking for a once-a-second scheduler: ticker() every
-- tick_period_ms, each in its own committed transaction. Invoker rights (it commits).
create or replace procedure pgque.ticker_loop()
language plpgsql
as $$
declare
  period int;
  iterations int;
  started timestamptz := pg_catalog.clock_timestamp();
  elapsed_ms float8;
begin
  select tick_period_ms into period from pgque.config;
  if period is null or period < 1 then
    period := 100;
  end if;
  period := least(period, 1000);
  iterations := greatest(1, 1000 / period);
  for i in 1 .. iterations loop
    perform pgque.ticker();
    commit;
    elapsed_ms := extract(epoch from pg_catalog.clock_timestamp() - started) * 1000;
    exit when i = iterations or elapsed_ms + period >= 1000;
    perform pg_catalog.pg_sleep(period / 1000.0);
  end loop;
end;
$$;

-- start: schedule ticking and maintenance with pg_cron in this database.
create or replace function pgque.start()
returns void
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  ticker_job bigint;
  maint_job bigint;
begin
  if not exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    -- the middle sentence is matched by PgQue clients and acceptance tests (SQLSTATE P0001)
    raise exception 'pgque.start() schedules pg_cron jobs, but the pg_cron extension is not installed. '
      'PgQue itself works without pg_cron: run a ticker process (the TypeScript Ticker service), '
      'or call pgque.ticker() and pgque.maint() on a schedule of your own.';
  end if;
  perform pgque.stop();
  execute 'select cron.schedule_in_database($1, $2, $3, pg_catalog.current_database())'
    into ticker_job using 'pgque_ticker', '1 second', 'call pgque.ticker_loop()';
  execute 'select cron.schedule_in_database($1, $2, $3, pg_catalog.current_database())'
    into maint_job using 'pgque_maint', '30 seconds', 'set statement_timeout = ''25s''; select pgque.maint()';
  execute 'select cron.schedule_in_database($1, $2, $3, pg_catalog.current_database())'
    using 'pgque_retry_events', '30 seconds', 'set statement_timeout = ''25s''; select pgque.maint_retry_events()';
  execute 'select cron.schedule_in_database($1, $2, $3, pg_catalog.current_database())'
    using 'pgque_rotate_step2', '10 seconds', 'select pgque.maint_rotate_tables_step2()';
  update pgque.config set ticker_job_id = ticker_job, maint_job_id = maint_job, scheduler = 'pg_cron';
  raise notice 'pgque: ticker and maintenance scheduled with pg_cron';
end;
$$;

-- stop: remove the pg_cron jobs start() created. Safe without pg_cron.
create or replace function pgque.stop()
returns void
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  job text;
begin
  if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    foreach job in array array['pgque_ticker', 'pgque_maint', 'pgque_retry_events', 'pgque_rotate_step2'] loop
      begin
        execute 'select cron.unschedule($1)' using job;
      exception when others then
        null; -- not scheduled
      end;
    end loop;
  end if;
  update pgque.config set ticker_job_id = null, maint_job_id = null, scheduler = null;
end;
$$;
