-- Revisions of the settings edited as a whole (schedules' layers, escalation policies'
-- levels, SLA policies' targets and channels, calendars' hours and holidays, teams'
-- members): each change adds one, GET gives it as the
-- ETag, and a PATCH carrying If-Match with an older one is refused (412) instead of writing
-- over a change its sender never saw. A constant default: no table rewrite.
alter table stega.schedules add column revision integer not null default 1;
alter table stega.escalation_policies add column revision integer not null default 1;
alter table stega.sla_policies add column revision integer not null default 1;
alter table stega.calendars add column revision integer not null default 1;
alter table stega.teams add column revision integer not null default 1;
