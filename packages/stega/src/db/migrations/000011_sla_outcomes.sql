-- The outcome of every SLA target that stopped: met when stopped at or before its due time.
-- A clock row holds only the latest cycle of its kind (a next-reply clock starts anew for
-- each requester reply), so outcomes are kept here for the achievement report. A reopened
-- resolution clock keeps its start and replaces its outcome when it stops again.
create table stega.sla_outcomes (
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  kind text not null check (kind in ('first_response', 'resolution', 'next_reply')),
  started_at timestamptz not null,
  due_at timestamptz not null,
  stopped_at timestamptz not null,
  met boolean not null,
  -- met: when it was met (stopped_at); missed: when it was missed (due_at)
  decided_at timestamptz not null,
  primary key (ticket_id, kind, started_at)
);
create index sla_outcomes_decided_idx on stega.sla_outcomes (decided_at);

insert into stega.sla_outcomes (ticket_id, kind, started_at, due_at, stopped_at, met, decided_at)
select ticket_id, kind, started_at, due_at, stopped_at, stopped_at <= due_at,
       case when stopped_at <= due_at then stopped_at else due_at end
  from stega.sla_clocks
 where stopped_at is not null;
