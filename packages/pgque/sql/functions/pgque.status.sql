-- status: a health summary, one row per component (component, status, detail), as
-- PgQue's: postgresql, pgque (version), api_level, scheduler, ticker, maintenance,
-- pg_cron (only when the extension is missing), queues, consumers.
-- Without pg_cron jobs the scheduler row names the manual path: pgque.ticker() and
-- pgque.maint() (with pgque.maint_retry_events()) called on a schedule of the caller's.
-- returns: setof (component, status, detail). tables: config, queue, subscription.
create or replace function pgque.status(out component text, out status text, out detail text)
returns setof record
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  cfg pgque.config;
  has_cron boolean := exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron');
begin
  select * into cfg from pgque.config;
  component := 'postgresql'; status := 'info'; detail := pg_catalog.version(); return next;
  component := 'pgque'; status := 'info'; detail := pgque.version(); return next;
  component := 'api_level'; status := 'info'; detail := pgque.api_level(); return next;
  component := 'scheduler'; status := coalesce(cfg.scheduler, 'manual');
  if cfg.scheduler is null then
    detail := pg_catalog.format(
      'no pg_cron jobs: call pgque.ticker() and pgque.maint() (and pgque.maint_retry_events()) '
      'on a schedule, or run the TypeScript Ticker service; tick_period_ms=%s',
      cfg.tick_period_ms);
  else
    detail := pg_catalog.format('ticker_job_id=%s maint_job_id=%s tick_period_ms=%s',
                                cfg.ticker_job_id, cfg.maint_job_id, cfg.tick_period_ms);
  end if;
  return next;
  component := 'ticker'; status := case when cfg.ticker_job_id is null then 'stopped' else 'scheduled' end;
  detail := null; return next;
  component := 'maintenance'; status := case when cfg.maint_job_id is null then 'stopped' else 'scheduled' end;
  detail := null; return next;
  if not has_cron then
    component := 'pg_cron'; status := 'unavailable';
    detail := pg_catalog.format(
      'extension not installed: run pgque.ticker() and pgque.maint() yourself (tick_period_ms=%s)',
      cfg.tick_period_ms);
    return next;
  end if;
  component := 'queues'; status := 'info';
  detail := (select count(*) from pgque.queue) || ' queues configured'; return next;
  component := 'consumers'; status := 'info';
  detail := (select count(*) from pgque.subscription) || ' active subscriptions'; return next;
end;
$$;
