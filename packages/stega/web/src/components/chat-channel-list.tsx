import type { Issue } from '../api.js';
import type {
  ChatChannelsDraft,
  ChatDraft,
  PagerDutyDraft,
  SetChatChannels,
  Severity,
} from './chat-channel-drafts.js';
import { type Choice, SelectField, TextField } from './form-fields.js';

const SECRET_INPUT = { type: 'password', autoComplete: 'off', spellCheck: false } as const;

/**
 * Where a list of channels sits in its form. `path` is the API's list
 * (`alert_channels.slack`, `levels[1].targets.channels.pagerduty`); `idPrefix` keeps ids unique
 * when a page has several forms; `owner` ("level 1") names the rows of one of several lists
 * ("Level 1 Slack channel 1 name", "Add a Slack channel to level 1").
 */
interface ListPlace {
  path: string;
  idPrefix?: string | undefined;
  owner?: string | undefined;
}

const labelOf = (owner: string | undefined, name: string) =>
  owner ? `${owner.charAt(0).toUpperCase()}${owner.slice(1)} ${name}` : name;

/** The Add button under a list. */
function AddButton<T>({
  rows,
  onChange,
  noun,
  owner,
  blank,
}: {
  rows: T[];
  onChange: (rows: T[]) => void;
  noun: string;
  owner: string | undefined;
  blank: T;
}) {
  return (
    <button type="button" className="secondary small" onClick={() => onChange([...rows, blank])}>
      Add a {noun}
      {owner ? ` to ${owner}` : ''}
    </button>
  );
}

/** A row's Remove button. */
function RemoveButton({
  name,
  owner,
  onClick,
}: {
  name: string;
  owner: string | undefined;
  onClick: () => void;
}) {
  return (
    <button type="button" className="secondary small" onClick={onClick}>
      Remove {name}
      {owner ? ` of ${owner}` : ''}
    </button>
  );
}

/**
 * The editor of Slack or Teams channels: each a name people recognise it by and the webhook
 * URL, which is the channel's secret (shown as dots; only admins get it back).
 */
export function ChatChannelListEditor({
  path,
  idPrefix,
  owner,
  service,
  title,
  urlHint,
  rows,
  issues,
  onChange,
}: ListPlace & {
  /** `Slack` or `Teams`: the start of each label ("Slack channel 1 name"). */
  service: string;
  title: string;
  urlHint: string;
  rows: ChatDraft[];
  issues: Issue[];
  onChange: (rows: ChatDraft[]) => void;
}) {
  const change = (index: number, patch: Partial<ChatDraft>) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  return (
    <div className="webhooks" data-channels={service.toLowerCase()}>
      <p className="label-like">{labelOf(owner, title)}</p>
      {rows.length === 0 ? <p className="muted small">None.</p> : null}
      {rows.map((row, i) => {
        const base = `${path}[${i}]`;
        const name = `${service} channel ${i + 1}`;
        return (
          // rows have no identity of their own: the API knows a channel by its place
          <div className="webhook-row" key={i}>
            <TextField
              path={`${base}.label`}
              idPrefix={idPrefix}
              label={labelOf(owner, `${name} name`)}
              issues={issues}
              hint="How people recognise it, e.g. #support-escalations. Shown to everyone."
              hintAfter
              value={row.label}
              onChange={(label) => change(i, { label })}
            />
            <TextField
              path={`${base}.url`}
              idPrefix={idPrefix}
              label={labelOf(owner, `${name} webhook URL`)}
              issues={issues}
              hint={urlHint}
              hintAfter
              value={row.url}
              onChange={(url) => change(i, { url })}
              input={SECRET_INPUT}
            />
            <RemoveButton
              name={name}
              owner={owner}
              onClick={() => onChange(rows.filter((_, j) => j !== i))}
            />
          </div>
        );
      })}
      <AddButton
        rows={rows}
        onChange={onChange}
        noun={`${service} channel`}
        owner={owner}
        blank={{ url: '', label: '' }}
      />
    </div>
  );
}

const SEVERITIES: (Choice & { value: Severity })[] = [
  { value: 'critical', label: 'Critical (pages the on-call person at once)' },
  { value: 'error', label: 'Error' },
  { value: 'warning', label: 'Warning' },
  { value: 'info', label: 'Info' },
];

/** The editor of PagerDuty services: name, integration key (a secret), severity. */
export function PagerDutyListEditor({
  path,
  idPrefix,
  owner,
  rows,
  issues,
  onChange,
}: ListPlace & {
  rows: PagerDutyDraft[];
  issues: Issue[];
  onChange: (rows: PagerDutyDraft[]) => void;
}) {
  const change = (index: number, patch: Partial<PagerDutyDraft>) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  return (
    <div className="webhooks" data-channels="pagerduty">
      <p className="label-like">{labelOf(owner, 'PagerDuty services')}</p>
      <p className="muted small">
        Each alert opens a PagerDuty incident; it is resolved there when the SLA is met or the
        ticket resolved, and acknowledged there when someone acknowledges it here.
      </p>
      {rows.length === 0 ? <p className="muted small">None.</p> : null}
      {rows.map((row, i) => {
        const base = `${path}[${i}]`;
        const name = `PagerDuty service ${i + 1}`;
        return (
          <div className="webhook-row" key={i}>
            <TextField
              path={`${base}.label`}
              idPrefix={idPrefix}
              label={labelOf(owner, `${name} name`)}
              issues={issues}
              hint="How people recognise it, e.g. Helpdesk on-call. Shown to everyone."
              hintAfter
              value={row.label}
              onChange={(label) => change(i, { label })}
            />
            <TextField
              path={`${base}.routing_key`}
              idPrefix={idPrefix}
              label={labelOf(owner, `${name} integration key`)}
              issues={issues}
              hint="The 32-character Integration Key of the service’s Events API v2 integration. A secret: only admins see it."
              hintAfter
              value={row.routing_key}
              onChange={(routing_key) => change(i, { routing_key })}
              input={SECRET_INPUT}
            />
            <SelectField
              path={`${base}.breach_severity`}
              idPrefix={idPrefix}
              label={labelOf(owner, `${name} severity of a breach`)}
              issues={issues}
              value={row.breach_severity}
              onChange={(severity) => change(i, { breach_severity: severity as Severity })}
              choices={SEVERITIES}
            />
            <RemoveButton
              name={name}
              owner={owner}
              onClick={() => onChange(rows.filter((_, j) => j !== i))}
            />
          </div>
        );
      })}
      <AddButton
        rows={rows}
        onChange={onChange}
        noun="PagerDuty service"
        owner={owner}
        blank={{ routing_key: '', label: '', breach_severity: 'critical' }}
      />
    </div>
  );
}

/**
 * Slack channels, Teams channels and PagerDuty services of an SLA policy (`path`
 * `alert_channels`) or of an escalation level (`levels[1].targets.channels`), each error
 * next to its field.
 */
export function ChatChannelFields({
  path,
  idPrefix,
  owner,
  value,
  issues,
  onChange,
}: ListPlace & {
  value: ChatChannelsDraft;
  issues: Issue[];
  onChange: SetChatChannels;
}) {
  const place = { idPrefix, owner };
  return (
    <>
      <ChatChannelListEditor
        {...place}
        path={`${path}.slack`}
        service="Slack"
        title="Slack channels"
        urlHint="From Slack: an incoming webhook for the channel (https://hooks.slack.com/services/…). A secret: only admins see it."
        rows={value.slack}
        issues={issues}
        onChange={(rows) => onChange('slack', rows)}
      />
      <ChatChannelListEditor
        {...place}
        path={`${path}.teams`}
        service="Teams"
        title="Microsoft Teams channels"
        urlHint="From the channel’s Workflows: “Send webhook alerts to a channel”, then copy its URL. A secret: only admins see it."
        rows={value.teams}
        issues={issues}
        onChange={(rows) => onChange('teams', rows)}
      />
      <PagerDutyListEditor
        {...place}
        path={`${path}.pagerduty`}
        rows={value.pagerduty}
        issues={issues}
        onChange={(rows) => onChange('pagerduty', rows)}
      />
    </>
  );
}
