-- Producer idempotency (PgQue 0.3): send_idem claims (queue, key) here in the producer's
-- transaction, with the id of the event it appends, until expires_at. A live claim makes a
-- repeated send answer the first id instead of appending. Private: keys may carry
-- business identifiers, so no role reads this table (see grants.sql).
create table pgque.idem (
  queue_id int4 not null references pgque.queue (queue_id) on delete cascade,
  idem_key text not null,
  ev_id bigint not null,
  expires_at timestamptz not null,
  constraint idem_pkey primary key (queue_id, idem_key)
);
-- maint_idem deletes expired claims oldest first, queue by queue
create index idem_expiry_idx on pgque.idem (queue_id, expires_at);
