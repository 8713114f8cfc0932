-- Replies out (issue 23): an agent's public reply and a new ticket's acknowledgement are
-- emailed to the customer through the delivery ledger, on the channel `customer_email`:
-- one row per outgoing message (alert_type `reply`, alert_id the comment; `acknowledgement`,
-- alert_id the ticket, so a ticket is acknowledged once), its recipient the requester, its
-- payload the whole message as recorded (Message-ID included), sent after the commit that
-- recorded it and retried, behind the SMTP server's circuit, like an alert's email.
alter table stega.alert_deliveries drop constraint alert_deliveries_alert_type_check;
alter table stega.alert_deliveries add constraint alert_deliveries_alert_type_check
  check (alert_type in ('breach', 'warning', 'escalation', 'reply', 'acknowledgement'));
alter table stega.alert_deliveries drop constraint alert_deliveries_channel_check;
alter table stega.alert_deliveries add constraint alert_deliveries_channel_check
  check (channel in ('in_app', 'email', 'webhook', 'slack', 'teams', 'pagerduty',
                     'customer_email'));

-- A delivery status notification (a bounce) names the message it reports on by Message-ID.
create index alert_deliveries_message_key_idx
  on stega.alert_deliveries ((payload ->> 'message_key'))
  where channel = 'customer_email';

-- Acknowledgements recently sent to one address (a loop of auto-responders stops there).
create index alert_deliveries_acknowledged_idx
  on stega.alert_deliveries (recipient, created_at)
  where alert_type = 'acknowledgement';

-- Whether a mailbox answers a new ticket opened by mail with "we got your request".
alter table stega.mailboxes add column acknowledge boolean not null default true;
