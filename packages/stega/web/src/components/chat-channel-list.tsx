import type { Issue } from '../api.js';
import { Field } from './field.js';
import { TextField } from './form-fields.js';

/** A Slack or Teams channel as a form edits it: its webhook URL (a secret) and its name. */
export interface ChatDraft {
  url: string;
  label: string;
}

export type Severity = 'critical' | 'error' | 'warning' | 'info';

/** A PagerDuty service as a form edits it. */
export interface PagerDutyDraft {
  routing_key: string;
  label: string;
  breach_severity: Severity;
}

const SECRET_INPUT = { type: 'password', autoComplete: 'off', spellCheck: false } as const;

/** One row's Remove button and the Add button under a list. */
function RowButtons<T>({
  rows,
  onChange,
  noun,
  blank,
}: {
  rows: T[];
  onChange: (rows: T[]) => void;
  noun: string;
  blank: T;
}) {
  return (
    <button type="button" className="secondary small" onClick={() => onChange([...rows, blank])}>
      Add a {noun}
    </button>
  );
}

/**
 * The editor of a policy's Slack or Teams channels: each a name people recognise it by and
 * the webhook URL, which is the channel's secret (shown as dots; only admins get it back).
 */
export function ChatChannelListEditor({
  path,
  service,
  title,
  urlHint,
  rows,
  issues,
  onChange,
}: {
  /** `alert_channels.slack` or `alert_channels.teams`. */
  path: string;
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
      <p className="label-like">{title}</p>
      {rows.length === 0 ? <p className="muted small">None.</p> : null}
      {rows.map((row, i) => {
        const base = `${path}[${i}]`;
        const name = `${service} channel ${i + 1}`;
        return (
          // rows have no identity of their own: the API knows a channel by its place
          <div className="webhook-row" key={i}>
            <TextField
              path={`${base}.label`}
              label={`${name} name`}
              issues={issues}
              hint="How people recognise it, e.g. #support-escalations. Shown to everyone."
              hintAfter
              value={row.label}
              onChange={(label) => change(i, { label })}
            />
            <TextField
              path={`${base}.url`}
              label={`${name} webhook URL`}
              issues={issues}
              hint={urlHint}
              hintAfter
              value={row.url}
              onChange={(url) => change(i, { url })}
              input={SECRET_INPUT}
            />
            <button
              type="button"
              className="secondary small"
              onClick={() => onChange(rows.filter((_, j) => j !== i))}
            >
              Remove {service} channel {i + 1}
            </button>
          </div>
        );
      })}
      <RowButtons
        rows={rows}
        onChange={onChange}
        noun={`${service} channel`}
        blank={{ url: '', label: '' }}
      />
    </div>
  );
}

const SEVERITIES: { value: Severity; words: string }[] = [
  { value: 'critical', words: 'Critical (pages the on-call person at once)' },
  { value: 'error', words: 'Error' },
  { value: 'warning', words: 'Warning' },
  { value: 'info', words: 'Info' },
];

/** The editor of a policy's PagerDuty services: name, integration key (a secret), severity. */
export function PagerDutyListEditor({
  rows,
  issues,
  onChange,
}: {
  rows: PagerDutyDraft[];
  issues: Issue[];
  onChange: (rows: PagerDutyDraft[]) => void;
}) {
  const change = (index: number, patch: Partial<PagerDutyDraft>) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  return (
    <div className="webhooks" data-channels="pagerduty">
      <p className="label-like">PagerDuty services</p>
      <p className="muted small">
        Each alert opens a PagerDuty incident; it is resolved there when the SLA is met or the
        ticket resolved, and acknowledged there when someone acknowledges it here.
      </p>
      {rows.length === 0 ? <p className="muted small">None.</p> : null}
      {rows.map((row, i) => {
        const base = `alert_channels.pagerduty[${i}]`;
        const name = `PagerDuty service ${i + 1}`;
        return (
          <div className="webhook-row" key={i}>
            <TextField
              path={`${base}.label`}
              label={`${name} name`}
              issues={issues}
              hint="How people recognise it, e.g. Helpdesk on-call. Shown to everyone."
              hintAfter
              value={row.label}
              onChange={(label) => change(i, { label })}
            />
            <TextField
              path={`${base}.routing_key`}
              label={`${name} integration key`}
              issues={issues}
              hint="The 32-character Integration Key of the service’s Events API v2 integration. A secret: only admins see it."
              hintAfter
              value={row.routing_key}
              onChange={(routing_key) => change(i, { routing_key })}
              input={SECRET_INPUT}
            />
            <Field
              path={`${base}.breach_severity`}
              label={`${name} severity of a breach`}
              issues={issues}
            >
              {(aria) => (
                <select
                  {...aria}
                  value={row.breach_severity}
                  onChange={(e) => change(i, { breach_severity: e.target.value as Severity })}
                >
                  {SEVERITIES.map((s) => (
                    <option key={s.value} value={s.value}>
                      {s.words}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <button
              type="button"
              className="secondary small"
              onClick={() => onChange(rows.filter((_, j) => j !== i))}
            >
              Remove PagerDuty service {i + 1}
            </button>
          </div>
        );
      })}
      <RowButtons
        rows={rows}
        onChange={onChange}
        noun="PagerDuty service"
        blank={{ routing_key: '', label: '', breach_severity: 'critical' }}
      />
    </div>
  );
}
