-- Core state of the engine. Tables are private: the public API is the functions.

create table pgque.config (
  singleton bool primary key default true check (singleton),
  ticker_job_id bigint,
  maint_job_id bigint,
  scheduler text check (scheduler in ('pg_cron', 'pg_timetable')),
  tick_period_ms int not null default 100
    check (tick_period_ms between 1 and 1000 and 1000 % tick_period_ms = 0),
  installed_at timestamptz not null default now()
);
insert into pgque.config default values;

create table pgque.queue (
  queue_id serial primary key,
  queue_name text not null unique,
  queue_ntables int not null default 3,
  queue_cur_table int not null default 0,
  queue_rotation_period interval not null default '2 hours',
  queue_switch_step1 bigint not null default (pg_catalog.pg_current_xact_id()::text::bigint),
  queue_switch_step2 bigint default (pg_catalog.pg_current_xact_id()::text::bigint),
  queue_switch_time timestamptz not null default now(),
  queue_external_ticker bool not null default false,
  queue_disable_insert bool not null default false,
  queue_ticker_paused bool not null default false,
  queue_ticker_max_count int not null default 500,
  queue_ticker_max_lag interval not null default '3 seconds',
  queue_ticker_idle_period interval not null default '1 minute',
  queue_data_pfx text not null,
  queue_event_seq text not null,
  queue_tick_seq text not null,
  queue_extra_maint text[],
  queue_max_retries int4 check (queue_max_retries >= 0)
);

create table pgque.consumer (
  co_id serial primary key,
  co_name text not null,
  constraint consumer_name_uq unique (co_name)
);

-- One row per (queue, consumer). Cooperative members share the main row's sub_id,
-- so sub_id is deliberately not unique: it is the identity that owns retries.
create table pgque.subscription (
  sub_id int not null,
  sub_queue int not null references pgque.queue (queue_id),
  sub_consumer int not null references pgque.consumer (co_id),
  sub_last_tick bigint,
  sub_active timestamptz not null default now(),
  sub_batch bigint,
  sub_next_tick bigint,
  sub_role text not null default 'normal'
    check (sub_role in ('normal', 'coop_main', 'coop_member')),
  primary key (sub_queue, sub_consumer),
  constraint subscription_batch_uq unique (sub_batch)
);
create sequence pgque.subscription_sub_id_seq owned by pgque.subscription.sub_id;
alter table pgque.subscription
  alter column sub_id set default nextval('pgque.subscription_sub_id_seq');
create index subscription_sub_id_idx on pgque.subscription (sub_queue, sub_id);

create table pgque.tick (
  tick_queue int4 not null references pgque.queue (queue_id),
  tick_id bigint not null,
  tick_time timestamptz not null default now(),
  tick_snapshot pg_snapshot not null default pg_catalog.pg_current_snapshot(),
  tick_event_seq bigint not null,
  primary key (tick_queue, tick_id)
);

create sequence pgque.batch_id_seq;

-- Shape of every queue's event tables; never holds rows itself.
create table pgque.event_template (
  ev_id bigint not null,
  ev_time timestamptz not null,
  ev_txid xid8 not null default pg_catalog.pg_current_xact_id(),
  ev_owner int4,
  ev_retry int4,
  ev_type text,
  ev_data text,
  ev_extra1 text,
  ev_extra2 text,
  ev_extra3 text,
  ev_extra4 text
);

create table pgque.retry_queue (
  ev_retry_after timestamptz not null,
  ev_queue int4 not null references pgque.queue (queue_id),
  like pgque.event_template,
  primary key (ev_owner, ev_id)
);
alter table pgque.retry_queue alter column ev_owner set not null;
alter table pgque.retry_queue alter column ev_txid drop not null;
alter table pgque.retry_queue alter column ev_txid drop default;
create index retry_queue_due_idx on pgque.retry_queue (ev_retry_after);

create table pgque.dead_letter (
  dl_id bigserial primary key,
  dl_queue_id int4 not null references pgque.queue (queue_id) on delete cascade,
  dl_consumer_id int4 not null references pgque.consumer (co_id) on delete cascade,
  dl_time timestamptz not null default now(),
  dl_reason text,
  ev_id bigint not null,
  ev_time timestamptz not null,
  ev_txid xid8,
  ev_retry int4,
  ev_type text,
  ev_data text,
  ev_extra1 text,
  ev_extra2 text,
  ev_extra3 text,
  ev_extra4 text
);
create index dead_letter_queue_time_idx on pgque.dead_letter (dl_queue_id, dl_time);
create unique index dead_letter_event_uq on pgque.dead_letter (dl_queue_id, dl_consumer_id, ev_id);

-- Field order is part of the API: clients build it positionally for nack.
create type pgque.message as (
  msg_id bigint,
  batch_id bigint,
  type text,
  payload text,
  retry_count int4,
  created_at timestamptz,
  extra1 text,
  extra2 text,
  extra3 text,
  extra4 text
);
