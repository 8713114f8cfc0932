-- delivery_target_masked: a delivery's recipient as every agent who sees the ticket may read it
-- (the ticket activity's entry of a delivery that failed for good keeps only this form).
-- parameters: p_channel, the delivery's channel; p_recipient, its recipient as the ledger keeps it.
-- returns: webhook, Slack, Teams and push URLs as scheme, host and the last 4 characters
--   (`https://hooks.example.com/…x9Qz`: their path is their secret); SMS and voice numbers as
--   their last 4 digits; anything else (an agent, an email address, a PagerDuty recipient, which
--   already names its key by its last 4 only) unchanged.
-- tables: none.
create or replace function stega.delivery_target_masked(p_channel text, p_recipient text)
  returns text
  language sql
  immutable
  set search_path = stega, pg_catalog, pg_temp
as $$
  select case
           when p_channel in ('webhook', 'slack', 'teams', 'push') then
             coalesce(
               (select u.part[1] || '//' || pg_catalog.regexp_replace(u.part[2], '^.*@', '')
                       || '/…' || pg_catalog.right(u.part[3], 4)
                  from pg_catalog.regexp_match(
                         p_recipient, '^([a-zA-Z][a-zA-Z0-9+.-]*:)//([^/?#]*)(.*)$') as u(part)),
               '…' || pg_catalog.right(p_recipient, 4))
           when p_channel in ('sms', 'voice') then '…' || pg_catalog.right(p_recipient, 4)
           else p_recipient
         end
$$;
