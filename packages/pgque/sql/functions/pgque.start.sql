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
      'or call pgque.ticker() and pgque.maint() on a schedule of your own.'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ011';
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
