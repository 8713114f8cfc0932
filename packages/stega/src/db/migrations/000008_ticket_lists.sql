-- Ticket lists whose cost follows the page, not the table (issue 17).

-- The earliest due instant of the ticket's running clocks (null when none runs), and whether
-- a clock of it ever missed its target (a breach recorded, or stopped or paused after its due
-- time). Both are kept by clockSave in the transaction that changes the clocks; a running
-- clock past its due time is `next_due_at < now`.
alter table stega.tickets
  add column next_due_at timestamptz,
  add column sla_missed boolean not null default false,
  add column priority_rank smallint generated always as (
    case priority when 'urgent' then 0 when 'high' then 1 when 'normal' then 2 else 3 end
  ) stored,
  -- subject and requester, for full-text search (comments have their own index)
  add column search_doc tsvector generated always as (
    to_tsvector('simple', subject || ' ' || requester_name || ' ' || requester_email || ' '
      || coalesce(requester_org, ''))
  ) stored;

update stega.tickets t
   set next_due_at = c.next_due_at,
       sla_missed = c.missed
  from (select ticket_id,
               min(due_at) filter (where stopped_at is null and paused_since is null)
                 as next_due_at,
               coalesce(bool_or(stopped_at > due_at or paused_since >= due_at), false)
                 or exists (select 1 from stega.sla_breaches b
                             where b.ticket_id = sla_clocks.ticket_id) as missed
          from stega.sla_clocks
         group by ticket_id) c
 where c.ticket_id = t.id;

-- one index per ordering the lists offer; id breaks ties (keyset pagination)
create index tickets_next_due_idx
  on stega.tickets ((coalesce(next_due_at, 'infinity'::timestamptz)), id);
create index tickets_priority_rank_idx on stega.tickets (priority_rank, (-id));
create index tickets_created_idx on stega.tickets (created_at, id);
create index tickets_updated_idx on stega.tickets (updated_at);
create index tickets_missed_idx on stega.tickets (id) where sla_missed;
create index tickets_search_idx on stega.tickets using gin (search_doc);
create index ticket_comments_search_idx on stega.ticket_comments
  using gin (to_tsvector('simple', body));

-- A recorded breach marks its ticket, whoever records it (the detector, an import, a test).
create function stega.ticket_mark_missed() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  update stega.tickets set sla_missed = true where id = new.ticket_id and not sla_missed;
  return null;
end;
$$;

create trigger sla_breaches_mark_missed
  after insert on stega.sla_breaches
  for each row execute function stega.ticket_mark_missed();
