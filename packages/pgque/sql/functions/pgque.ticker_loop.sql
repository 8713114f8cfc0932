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
