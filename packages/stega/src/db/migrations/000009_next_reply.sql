-- A third SLA metric: after a requester's reply, the next agent reply is due within the
-- policy's next-reply target (null: the policy has no next-reply clock).
alter table stega.sla_policies
  add column next_reply_minutes int check (next_reply_minutes > 0);

alter table stega.sla_clocks drop constraint sla_clocks_kind_check;
alter table stega.sla_clocks add constraint sla_clocks_kind_check
  check (kind in ('first_response', 'resolution', 'next_reply'));
alter table stega.sla_breaches drop constraint sla_breaches_kind_check;
alter table stega.sla_breaches add constraint sla_breaches_kind_check
  check (kind in ('first_response', 'resolution', 'next_reply'));
alter table stega.sla_warnings drop constraint sla_warnings_kind_check;
alter table stega.sla_warnings add constraint sla_warnings_kind_check
  check (kind in ('first_response', 'resolution', 'next_reply'));

-- A comment written by the ticket's requester (a customer reply), not by an agent.
alter table stega.ticket_comments
  add column from_requester boolean not null default false;
