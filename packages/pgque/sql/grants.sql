-- Deny by default: PUBLIC can read and execute nothing in schema pgque.
-- Re-applied on every install, so grants always match this file.
revoke all on schema pgque from public;
revoke all on all tables in schema pgque from public;
revoke all on all sequences in schema pgque from public;
revoke execute on all functions in schema pgque from public;
revoke execute on all procedures in schema pgque from public;

grant usage on schema pgque to pgque_reader, pgque_writer, pgque_admin;

-- Admins operate through the functions: they read every table but change none directly,
-- so nothing an admin writes can reach the engine's dynamic SQL. An upgrade takes back
-- the wider rights older installs granted (only then, so a reinstall changes no ACL).
do $admin_rights$
begin
  if exists (select 1
               from pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
              where c.relnamespace = 'pgque'::regnamespace
                and a.grantee = 'pgque_admin'::regrole
                and a.privilege_type <> 'SELECT') then
    revoke all on all tables in schema pgque from pgque_admin;
    revoke all on all sequences in schema pgque from pgque_admin;
  end if;
end
$admin_rights$;
grant select on all tables in schema pgque to pgque_admin;
grant select on all sequences in schema pgque to pgque_admin;
grant execute on all functions in schema pgque to pgque_admin;
grant execute on procedure pgque.ticker_loop() to pgque_admin;
revoke execute on function
  pgque.uninstall(),
  pgque.insert_event_bulk(text, text, text[]),
  pgque._consumer_id(text),
  pgque._next_tick(int4, pgque.tick, interval, int4, interval),
  pgque._batch_subscription(bigint),
  pgque._validate_coop_names(text, text, text),
  pgque._clear_member_cursor(int4, int4),
  pgque._remove_member(int4, int4, int4),
  pgque._touch_member(int4, int4),
  pgque._writer_table(text),
  pgque._tick_untaken(int4, bigint),
  pgque._tick_taken(int4, bigint),
  pgque._tick_taken_next(int4, bigint),
  pgque._wake_ticker_near(int4, bigint, bigint),
  pgque._writer_branches(int4[], int4[], text),
  pgque._create_event_writers(),
  pgque._write_event(int4, int4, text, text),
  pgque._write_event(int4, int4, text, text[]),
  pgque._write_event(int4, int4, bigint, text, text, text),
  pgque._partition_lookup(text, text, int4, int4),
  pgque._pin_partition_consumer(text, text, int4),
  pgque._slot_lease(text, text, int4, int4, text),
  pgque._slot_next_batch(int4, text),
  pgque._settle_parked(int4, text, int4, text, bigint, bigint, bigint, bigint, interval, text),
  pgque._park_lapsed_slots(int4, bigint),
  pgque._window_event_tables(int4, bigint, bigint),
  pgque._window_event_sql(int4, int4, bigint, bigint, bigint, bigint)
from pgque_admin;
-- idempotency keys may carry business identifiers: no role reads them, not even admins
revoke all on pgque.idem from pgque_admin;

-- Readers see the metadata and dead letters; event tables are granted per queue.
grant select on pgque.config, pgque.queue, pgque.consumer, pgque.subscription, pgque.tick,
                pgque.retry_queue, pgque.dead_letter, pgque.event_template
  to pgque_reader;

-- Consumer side.
grant execute on function
  pgque.version(),
  pgque.api_level(),
  pgque.get_queue_info(),
  pgque.get_queue_info(text),
  pgque.get_consumer_info(),
  pgque.get_consumer_info(text),
  pgque.get_consumer_info(text, text),
  pgque.get_batch_info(bigint),
  pgque.register_consumer(text, text),
  pgque.register_consumer_at(text, text, bigint),
  pgque.unregister_consumer(text, text),
  pgque.subscribe(text, text),
  pgque.unsubscribe(text, text),
  pgque.next_batch(text, text),
  pgque.next_batch_info(text, text),
  pgque.next_batch_custom(text, text, interval, int4, interval),
  pgque.get_batch_events(bigint),
  pgque.finish_batch(bigint),
  pgque.event_retry(bigint, bigint, timestamptz),
  pgque.event_retry(bigint, bigint, integer),
  pgque.receive(text, text, int),
  pgque.ack(bigint),
  pgque.nack(bigint, pgque.message, interval, text),
  pgque.reject(bigint, pgque.message, text),
  pgque.dlq_inspect(text, int),
  pgque.register_subconsumer(text, text, text, boolean),
  pgque.subscribe_subconsumer(text, text, text, boolean),
  pgque.unregister_subconsumer(text, text, text, integer),
  pgque.unsubscribe_subconsumer(text, text, text, integer),
  pgque.next_batch(text, text, text, interval),
  pgque.next_batch_custom(text, text, text, interval, int4, interval, interval),
  pgque.receive_coop(text, text, text, int, interval),
  pgque.touch_subconsumer(text, text, text),
  pgque.get_consumer_config(text, text),
  pgque.get_coop_takeovers(text, text, int),
  pgque.subscribe_partitioned(text, text, integer),
  pgque.subscribe_slot(text, text, integer, integer),
  pgque.unsubscribe_slot(text, text, integer),
  pgque.claim_slot(text, text, integer, text, interval),
  pgque.release_slot(text, text, integer, text),
  pgque.receive_partitioned(text, text, integer, integer, text, integer),
  pgque.ack_partitioned(text, text, integer, integer, text),
  pgque.nack_partitioned(text, text, integer, integer, text, pgque.message, interval, text),
  pgque.reject_partitioned(text, text, integer, integer, text, pgque.message, text),
  pgque.touch_partition_worker(text, text, text, interval),
  pgque.remove_partition_worker(text, text, text)
to pgque_reader;
grant select on pgque.partition_slot_status to pgque_reader;

-- Producer side.
grant execute on function
  pgque.insert_event(text, text, text),
  pgque.insert_event(text, text, text, text, text, text, text),
  pgque.send(text, jsonb),
  pgque.send(text, text),
  pgque.send(text, text, jsonb),
  pgque.send(text, text, text),
  pgque.send(text, text, jsonb, text),
  pgque.send(text, text, text, text),
  pgque.send_idem(text, text, jsonb, text, interval, text),
  pgque.send_idem(text, text, text, text, interval, text),
  pgque.send_batch(text, jsonb[]),
  pgque.send_batch(text, text[]),
  pgque.send_batch(text, text, jsonb[]),
  pgque.send_batch(text, text, text[]),
  pgque.dlq_replay(bigint),
  pgque.dlq_replay_all(text)
to pgque_writer;
