-- Paged cooperative split and the takeover log (extensions beyond PgQue 0.2).

-- Main row of a cooperative group: hand out windows in pages of at most this many events
-- (NULL: whole windows, as upstream). Set with set_consumer_config(…, 'coop_page_size', …).
alter table pgque.subscription add column sub_page_size int4 check (sub_page_size > 0);
-- Main row: whether the last allocation opened a new window, so the next one serves an
-- open window's pages first; alternating keeps big and small windows both moving.
alter table pgque.subscription add column sub_last_claim_new boolean not null default false;
-- Member row holding a page: the page is the window's events with
-- sub_page_after < ev_id <= sub_page_through (NULL: unbounded on that side).
alter table pgque.subscription add column sub_page_after bigint;
alter table pgque.subscription add column sub_page_through bigint;
alter table pgque.subscription add column sub_page_no int4;

-- Windows of paged groups whose pages are not all handed out yet. The group cursor is
-- already past them; these rows (and the members holding pages) keep their ticks and
-- event tables alive until every page is handed out.
create table pgque.coop_window (
  cw_queue int4 not null references pgque.queue (queue_id),
  cw_sub_id int4 not null,
  cw_prev_tick bigint not null,
  cw_next_tick bigint not null,
  -- upper ev_id bound of every page but the last: page k is (bounds[k-1], bounds[k]]
  cw_bounds bigint[] not null,
  cw_next_page int4 not null,
  cw_opened_at timestamptz not null default now(),
  primary key (cw_queue, cw_sub_id, cw_next_tick)
);

-- One row per takeover of a silent member's batch or page.
create table pgque.coop_takeover (
  ct_id bigserial primary key,
  ct_time timestamptz not null default now(),
  ct_queue int4 not null references pgque.queue (queue_id) on delete cascade,
  ct_consumer text not null,
  ct_old_subconsumer text not null,
  ct_new_subconsumer text not null,
  ct_old_batch bigint not null,
  ct_new_batch bigint not null,
  ct_silent_for interval not null
);
create index coop_takeover_queue_time_idx on pgque.coop_takeover (ct_queue, ct_time);
