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
