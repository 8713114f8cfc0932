-- Who let a quarantined message through (an admin's retry): a message held back because its
-- sender opened too many tickets in the hour is filed past that limit once an admin retries
-- it. Null: never retried.
alter table stega.inbound_mail add column if not exists released_by text;
