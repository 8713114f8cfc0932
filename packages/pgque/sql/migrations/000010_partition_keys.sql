-- Partition keys (PgQue 0.3): a logical consumer split into n hash slots, each slot an
-- ordinary subscription named <consumer>#<slot>/<n> and leased to one worker at a time.
-- The event tables are untouched: a slot reads the whole stream and keeps the events whose
-- key (ev_extra1) hashes to it. Everything here is private; the API is the functions and
-- the partition_slot_status view.

-- One row per partitioned consumer: its slot count, pinned by the first subscription.
create table pgque.partition_consumer (
  pc_queue int4 not null references pgque.queue (queue_id) on delete cascade,
  pc_consumer text not null,
  pc_slots int4 not null check (pc_slots between 1 and 1024),
  pc_created_at timestamptz not null default now(),
  primary key (pc_queue, pc_consumer)
);

-- One row per subscribed slot: its lease. ps_owner holds the slot while ps_lease_until is
-- in the future, and keeps it afterwards until someone else claims it (or rotation parks
-- the slot); every change of holder raises ps_epoch, which fences the previous one.
-- A parked slot's open backlog batch: ps_backlog_batch, the parking it reads
-- (ps_backlog_tick) and its last event id (ps_backlog_through).
-- Updated on every receive and ack: room on the page keeps those updates HOT.
create table pgque.partition_slot (
  ps_queue int4 not null,
  ps_consumer text not null,
  ps_slot int4 not null check (ps_slot >= 0),
  ps_owner text,
  ps_lease_until timestamptz,
  ps_ttl interval,
  ps_epoch bigint not null default 0,
  ps_backlog_batch bigint,
  ps_backlog_tick bigint,
  ps_backlog_through bigint,
  primary key (ps_queue, ps_consumer, ps_slot),
  foreign key (ps_queue, ps_consumer)
    references pgque.partition_consumer (pc_queue, pc_consumer) on delete cascade
) with (fillfactor = 50);

-- Events of a slot whose lease lapsed while its cursor held table rotation back: rotation
-- moves them here and advances the slot's cursor, so no slot pins the event tables longer
-- than its lease. The slot reads them before anything past its cursor, in the order of
-- the parkings (pb_parked_tick, the tick the cursor moved to) and of ev_id within one.
create table pgque.partition_backlog (
  pb_queue int4 not null,
  pb_consumer text not null,
  pb_slot int4 not null,
  pb_parked_tick bigint not null,
  ev_id bigint not null,
  ev_time timestamptz not null,
  ev_txid xid8,
  ev_retry int4,
  ev_type text,
  ev_data text,
  ev_extra1 text,
  ev_extra2 text,
  ev_extra3 text,
  ev_extra4 text,
  primary key (pb_queue, pb_consumer, pb_slot, ev_id),
  foreign key (pb_queue, pb_consumer, pb_slot)
    references pgque.partition_slot (ps_queue, ps_consumer, ps_slot) on delete cascade
);
create index partition_backlog_order_idx
  on pgque.partition_backlog (pb_queue, pb_consumer, pb_slot, pb_parked_tick, ev_id);

-- Live workers of a partitioned consumer (our extension, for the client's
-- PartitionedConsumer): each renews its row while it runs, so every worker knows how
-- many share the slots.
create table pgque.partition_worker (
  pw_queue int4 not null,
  pw_consumer text not null,
  pw_worker text not null,
  pw_seen_until timestamptz not null,
  primary key (pw_queue, pw_consumer, pw_worker),
  foreign key (pw_queue, pw_consumer)
    references pgque.partition_consumer (pc_queue, pc_consumer) on delete cascade
) with (fillfactor = 50);

-- Every expected slot of every partitioned consumer, subscribed or not. lease_owner is
-- NULL once the lease has lapsed (lease_until keeps the stored expiry); last_tick and
-- pending_events are NULL for a slot without its subscription. pending_events counts the
-- queue's stream before the hash filter. parked_events (our extension): events rotation
-- moved to the slot's backlog, not yet acknowledged.
create view pgque.partition_slot_status as
select q.queue_name,
       pc.pc_consumer as consumer,
       k.slot,
       pc.pc_slots as n,
       s.sub_consumer is not null as subscribed,
       case when ps.ps_lease_until >= pg_catalog.now() then ps.ps_owner end as lease_owner,
       ps.ps_lease_until as lease_until,
       coalesce(ps.ps_epoch, 0) as epoch,
       s.sub_last_tick as last_tick,
       case when s.sub_consumer is not null then newest.tick_event_seq - t.tick_event_seq end
         as pending_events,
       (select pg_catalog.count(*) from pgque.partition_backlog b
         where b.pb_queue = pc.pc_queue and b.pb_consumer = pc.pc_consumer and b.pb_slot = k.slot)
         as parked_events
  from pgque.partition_consumer pc
  join pgque.queue q on q.queue_id = pc.pc_queue
  cross join lateral pg_catalog.generate_series(0, pc.pc_slots - 1) as k(slot)
  left join pgque.partition_slot ps
    on ps.ps_queue = pc.pc_queue and ps.ps_consumer = pc.pc_consumer and ps.ps_slot = k.slot
  left join pgque.consumer c
    on c.co_name = pc.pc_consumer || '#' || k.slot::text || '/' || pc.pc_slots::text
  left join pgque.subscription s on s.sub_queue = pc.pc_queue and s.sub_consumer = c.co_id
  left join pgque.tick t on t.tick_queue = s.sub_queue and t.tick_id = s.sub_last_tick
  left join lateral (
    select nt.tick_event_seq from pgque.tick nt
     where nt.tick_queue = pc.pc_queue order by nt.tick_id desc limit 1) newest on true;
