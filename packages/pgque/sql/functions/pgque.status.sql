-- status: a health summary, one row per component.
create or replace function pgque.status(out component text, out status text, out detail text)
returns setof record
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  cfg pgque.config;
begin
  select * into cfg from pgque.config;
  component := 'postgresql'; status := 'info'; detail := pg_catalog.version(); return next;
  component := 'pgque'; status := 'info'; detail := pgque.version(); return next;
  component := 'scheduler'; status := coalesce(cfg.scheduler, 'manual');
  detail := pg_catalog.format('ticker_job_id=%s maint_job_id=%s tick_period_ms=%s',
                              cfg.ticker_job_id, cfg.maint_job_id, cfg.tick_period_ms);
  return next;
  component := 'ticker'; status := case when cfg.ticker_job_id is null then 'stopped' else 'scheduled' end;
  detail := null; return next;
  component := 'maintenance'; status := case when cfg.maint_job_id is null then 'stopped' else 'scheduled' end;
  detail := null; return next;
  if not exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    component := 'pg_cron'; status := 'unavailable'; detail := 'extension not installed'; return next;
  end if;
  component := 'queues'; status := 'info';
  detail := (select count(*) from pgque.queue) || ' queues configured'; return next;
  component := 'consumers'; status := 'info';
  detail := (select count(*) from pgque.subscription) || ' active subscriptions'; return next;
end;
$$;
