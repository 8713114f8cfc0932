-- Web Push (issue 25): a browser's push subscription is a contact method (method 'push',
-- address its endpoint, push_keys its keys). When the push service answers 404 or 410 the
-- subscription is gone for good: the method is marked invalid (never used again until the
-- browser registers anew) and the person's next rule step goes (page_step_advance).
alter table stega.contact_methods add column invalid_at timestamptz;
alter table stega.contact_methods add column invalid_reason text;

create function stega.push_subscription_gone() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$ begin return null; end $$;
create trigger alert_deliveries_push_subscription_gone
  after update of status on stega.alert_deliveries
  for each row
  when (new.channel = 'push' and new.status = 'failed_permanent'
        and old.status <> 'failed_permanent' and new.page_agent_id is not null
        and (new.last_outcome ->> 'status') in ('404', '410'))
  execute function stega.push_subscription_gone();
