import type { Issue } from '../../api.js';
import { ChatChannelFields } from '../../components/chat-channel-list.js';
import { FieldError, fieldId } from '../../components/field.js';
import {
  AddressListField,
  CheckField,
  GroupError,
  listIssues,
  TextField,
} from '../../components/form-fields.js';
import { type WebhookDraft, WebhookListEditor } from '../../components/webhook-list.js';
import type { PolicyDraft, SetDraft } from './draft.js';

interface SectionProps {
  draft: PolicyDraft;
  set: SetDraft;
  issues: Issue[];
}

/** Who is alerted first: in-app, the assignee's email, email recipients, webhooks. */
export function ChannelsSection({ draft, set, issues }: SectionProps) {
  return (
    <fieldset className="group">
      <legend>Alert channels</legend>
      <CheckField
        path="alert_channels.in_app"
        checked={draft.in_app}
        onChange={(v) => set('in_app', v)}
      >
        In-app alert to the assignee (or the team when unassigned)
      </CheckField>
      <CheckField
        path="alert_channels.email_assignee"
        checked={draft.email_assignee}
        onChange={(v) => set('email_assignee', v)}
      >
        Email the assignee
      </CheckField>
      <Recipients
        fallback={false}
        email={draft.email}
        webhooks={draft.webhooks}
        issues={issues}
        onEmail={(v) => set('email', v)}
        onWebhooks={(hooks) => set('webhooks', hooks)}
      />
      <GroupError path="alert_channels" issues={issues} />
    </fieldset>
  );
}

/** Chat and on-call tools: Slack and Teams channels, PagerDuty services. */
export function ChatChannelsSection({ draft, set, issues }: SectionProps) {
  return (
    <fieldset className="group">
      <legend>Chat and on-call</legend>
      <p className="muted small">
        Each alert is posted with the ticket, the target, the time left or overdue and a link to the
        ticket (and an Acknowledge button when the breach escalates).
      </p>
      <ChatChannelFields
        path="alert_channels"
        value={draft}
        issues={issues}
        onChange={(key, rows) => set(key, rows as PolicyDraft[typeof key])}
      />
    </fieldset>
  );
}

/** How a failing delivery (email, webhook, chat, PagerDuty) is tried again: the delays and the horizon. */
export function RetrySection({ draft, set, issues }: SectionProps) {
  const delaysId = fieldId('alert_channels.retry.delays_seconds');
  const delaysError = listIssues(issues, 'alert_channels.retry.delays_seconds', 'delay');
  return (
    <fieldset className="group">
      <legend>Retries</legend>
      <p className="muted small">
        A failing email, webhook, Slack, Teams or PagerDuty delivery is tried again after each delay
        (the last one repeats) until the horizon. Empty: after 1, 2, 5, 15, 30, 60, 120 s, then
        every 5 minutes, for 24 hours.
      </p>
      <div className="row">
        <div className={`field${delaysError ? ' has-error' : ''}`}>
          <label htmlFor={delaysId}>Delays between tries (seconds)</label>
          <input
            id={delaysId}
            value={draft.retry_delays}
            placeholder="1, 2, 5, 15, 30, 60, 120, 300"
            onChange={(e) => set('retry_delays', e.target.value)}
            aria-invalid={delaysError ? true : undefined}
            aria-describedby={delaysError ? `${delaysId}-error` : undefined}
          />
          <FieldError id={`${delaysId}-error`} message={delaysError || undefined} />
        </div>
        <TextField
          path="alert_channels.retry.give_up_after_hours"
          label="Keep trying for (hours)"
          issues={issues}
          value={draft.retry_hours}
          onChange={(v) => set('retry_hours', v)}
          input={{ inputMode: 'decimal', placeholder: '24' }}
        />
      </div>
      <GroupError path="alert_channels.retry" issues={issues} />
    </fieldset>
  );
}

/** Who is alerted when the remote channels above have not all delivered in time. */
export function FallbackSection({ draft, set, issues }: SectionProps) {
  return (
    <fieldset className="group">
      <legend>Fallback</legend>
      <CheckField
        path="alert_channels.fallback"
        checked={draft.fallback}
        onChange={(v) => set('fallback', v)}
      >
        When the emails, webhooks, Slack, Teams or PagerDuty above have not all delivered in time,
        alert these too
      </CheckField>
      {draft.fallback ? (
        <>
          <TextField
            path="alert_channels.fallback.after_minutes"
            label="Fall back after (minutes)"
            issues={issues}
            hint="Counted from the alert. Cancelled when every channel above (in-app aside) delivered first."
            value={draft.fallback_after_minutes}
            onChange={(v) => set('fallback_after_minutes', v)}
            input={{ inputMode: 'decimal' }}
          />
          <CheckField
            path="alert_channels.fallback.email_assignee"
            checked={draft.fallback_email_assignee}
            onChange={(v) => set('fallback_email_assignee', v)}
          >
            Fall back to the assignee’s email
          </CheckField>
          <CheckField
            path="alert_channels.fallback.email_team_lead"
            checked={draft.fallback_email_team_lead}
            onChange={(v) => set('fallback_email_team_lead', v)}
          >
            Fall back to the email of the ticket’s team lead
          </CheckField>
          <Recipients
            fallback
            email={draft.fallback_email}
            webhooks={draft.fallback_webhooks}
            issues={issues}
            onEmail={(v) => set('fallback_email', v)}
            onWebhooks={(hooks) => set('fallback_webhooks', hooks)}
          />
          <ChatChannelFields
            path="alert_channels.fallback"
            owner="fallback"
            value={draft.fallback_chat}
            issues={issues}
            onChange={(key, rows) => set('fallback_chat', { ...draft.fallback_chat, [key]: rows })}
          />
        </>
      ) : null}
      <GroupError path="alert_channels.fallback" issues={issues} />
    </fieldset>
  );
}

/** The email addresses and webhooks of the first alert or of its fallback. */
function Recipients({
  fallback,
  email,
  webhooks,
  issues,
  onEmail,
  onWebhooks,
}: {
  fallback: boolean;
  email: string;
  webhooks: WebhookDraft[];
  issues: Issue[];
  onEmail: (value: string) => void;
  onWebhooks: (hooks: WebhookDraft[]) => void;
}) {
  const base = fallback ? 'alert_channels.fallback' : 'alert_channels';
  return (
    <>
      <AddressListField
        path={`${base}.email`}
        label={fallback ? 'Fallback email recipients' : 'Email recipients'}
        issues={issues}
        rows={fallback ? 2 : 3}
        value={email}
        onChange={onEmail}
      />
      <WebhookListEditor
        path={`${base}.webhooks`}
        noun={fallback ? 'Fallback webhook' : 'Webhook'}
        title={fallback ? 'Fallback webhooks' : 'Webhooks'}
        hooks={webhooks}
        issues={issues}
        secretSetHint={`A secret is set. Re-enter it if you change the ${fallback ? 'fallback' : 'alert channels'}, or the calls go unsigned.`}
        onChange={onWebhooks}
      />
    </>
  );
}
