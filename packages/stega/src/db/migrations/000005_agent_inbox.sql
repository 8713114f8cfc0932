-- The inbox's unread count and the bell read only unread alerts.
create index alerts_unread_idx on stega.alerts (agent_id) where read_at is null;
