import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../api.js';
import { PriorityBadge } from '../components/badges.js';
import { Field, FieldError, fieldId, issueAt } from '../components/field.js';
import { LoadState, TableRegion } from '../components/layout.js';
import { RecordLoading } from '../components/record-loading.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { calendarsQuery, keys, policiesQuery, policyQuery, teamsQuery } from '../data/queries.js';
import { formatDateTime, formatMinutes, label } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import { type Policy, PRIORITIES, type Priority } from '../types.js';

/** SLA policies: targets per priority (and organisation), calendar, alert channels. */
export function PoliciesPage({ admin }: { admin: boolean }) {
  useTitle('SLA policies');
  const policies = useQuery({ ...policiesQuery(), refetchInterval: 15_000 });
  const calendars = useQuery({ ...calendarsQuery(), refetchInterval: 60_000 });
  const calendarName = (id: number) =>
    calendars.data?.items.find((c) => c.id === id)?.name ?? `Calendar ${id}`;
  const teams = useQuery({ ...teamsQuery(), refetchInterval: 60_000 });
  const teamName = (id: number) => teams.data?.items.find((t) => t.id === id)?.name ?? `Team ${id}`;
  const items = policies.data?.items ?? [];
  return (
    <div className="page">
      <div className="page-head">
        <h1>SLA policies</h1>
        {admin ? (
          <Link to="/policies/new" className="button primary">
            New policy
          </Link>
        ) : null}
      </div>
      <p className="muted">
        A ticket gets the most specific policy of its priority: for its team and requester
        organisation, else its team, else its organisation, else every team and organisation.
        Targets count business minutes of the policy’s calendar.
      </p>
      <LoadState
        loading={policies.isPending}
        error={policies.error}
        empty={items.length === 0}
        emptyText="No SLA policy yet."
      />
      {items.length > 0 ? (
        <TableRegion label="SLA policies">
          <table className="responsive">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Priority</th>
                <th scope="col">Organisation</th>
                <th scope="col">Team</th>
                <th scope="col">First response</th>
                <th scope="col">Resolution</th>
                <th scope="col">Next reply</th>
                <th scope="col">Calendar</th>
                <th scope="col">Alerts</th>
              </tr>
            </thead>
            <tbody>
              {items.map((p) => (
                <tr key={p.id}>
                  <td data-label="Name">
                    <Link to={`/policies/${p.id}`}>{p.name}</Link>
                  </td>
                  <td data-label="Priority">
                    <PriorityBadge priority={p.priority} />
                  </td>
                  <td data-label="Organisation">{p.requester_org ?? 'Every organisation'}</td>
                  <td data-label="Team">
                    {p.team_id === null ? 'Every team' : teamName(p.team_id)}
                  </td>
                  <td data-label="First response">{formatMinutes(p.first_response_minutes)}</td>
                  <td data-label="Resolution">{formatMinutes(p.resolution_minutes)}</td>
                  <td data-label="Next reply">
                    {p.next_reply_minutes === null ? '—' : formatMinutes(p.next_reply_minutes)}
                  </td>
                  <td data-label="Calendar">
                    <Link to={`/calendars/${p.calendar_id}`}>{calendarName(p.calendar_id)}</Link>
                  </td>
                  <td data-label="Alerts">{channelSummary(p)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      ) : null}
    </div>
  );
}

function channelSummary(p: Policy): string {
  const parts: string[] = [];
  if (p.alert_channels.in_app) parts.push('in-app');
  if (p.alert_channels.email_assignee) parts.push('email to the assignee');
  if (p.alert_channels.email.length > 0) parts.push(`${p.alert_channels.email.length} email`);
  if (p.alert_channels.webhooks.length > 0)
    parts.push(`${p.alert_channels.webhooks.length} webhook`);
  if (p.alert_channels.fallback)
    parts.push(`fallback after ${formatMinutes(p.alert_channels.fallback.after_minutes)}`);
  return parts.join(', ') || 'none';
}

interface WebhookDraft {
  url: string;
  secret: string;
  has_secret: boolean;
}

interface PolicyDraft {
  name: string;
  priority: Priority;
  requester_org: string;
  team_id: string;
  first_response_minutes: string;
  resolution_minutes: string;
  next_reply_minutes: string;
  calendar_id: string;
  in_app: boolean;
  email: string;
  email_assignee: boolean;
  webhooks: WebhookDraft[];
  /** Retry delays, seconds, comma-separated; empty: the defaults. */
  retry_delays: string;
  /** Retry horizon, hours; empty: the default (24). */
  retry_hours: string;
  fallback: boolean;
  fallback_after_minutes: string;
  fallback_email: string;
  fallback_email_assignee: boolean;
  fallback_email_team_lead: boolean;
  fallback_webhooks: WebhookDraft[];
}

const NEW_POLICY: PolicyDraft = {
  name: '',
  priority: 'normal',
  requester_org: '',
  team_id: '',
  first_response_minutes: '60',
  resolution_minutes: '480',
  next_reply_minutes: '',
  calendar_id: '',
  in_app: true,
  email: '',
  email_assignee: false,
  webhooks: [],
  retry_delays: '',
  retry_hours: '',
  fallback: false,
  fallback_after_minutes: '5',
  fallback_email: '',
  fallback_email_assignee: false,
  fallback_email_team_lead: false,
  fallback_webhooks: [],
};

const webhookDrafts = (hooks: { url: string; has_secret: boolean }[]): WebhookDraft[] =>
  hooks.map((w) => ({ url: w.url, secret: '', has_secret: w.has_secret }));

function draftOf(p: Policy): PolicyDraft {
  return {
    name: p.name,
    priority: p.priority,
    requester_org: p.requester_org ?? '',
    team_id: p.team_id === null ? '' : String(p.team_id),
    first_response_minutes: String(p.first_response_minutes),
    resolution_minutes: String(p.resolution_minutes),
    next_reply_minutes: p.next_reply_minutes === null ? '' : String(p.next_reply_minutes),
    calendar_id: String(p.calendar_id),
    in_app: p.alert_channels.in_app,
    email: p.alert_channels.email.join('\n'),
    email_assignee: p.alert_channels.email_assignee,
    webhooks: webhookDrafts(p.alert_channels.webhooks),
    retry_delays: (p.alert_channels.retry?.delays_seconds ?? []).join(', '),
    retry_hours:
      p.alert_channels.retry?.give_up_after_hours === undefined
        ? ''
        : String(p.alert_channels.retry.give_up_after_hours),
    fallback: p.alert_channels.fallback !== undefined,
    fallback_after_minutes: String(p.alert_channels.fallback?.after_minutes ?? 5),
    fallback_email: (p.alert_channels.fallback?.email ?? []).join('\n'),
    fallback_email_assignee: p.alert_channels.fallback?.email_assignee ?? false,
    fallback_email_team_lead: p.alert_channels.fallback?.email_team_lead ?? false,
    fallback_webhooks: webhookDrafts(p.alert_channels.fallback?.webhooks ?? []),
  };
}

/** A number when the text is one; the text itself otherwise, so the API names the problem. */
function numberOrText(value: string): number | string {
  const trimmed = value.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}

const addresses = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

const webhooksOf = (hooks: WebhookDraft[]) =>
  hooks.map((w) => ({ url: w.url.trim(), ...(w.secret ? { secret: w.secret } : {}) }));

/** The primary channels the form edits (in-app, email, the assignee, webhooks). */
function channelsOf(d: PolicyDraft) {
  return {
    in_app: d.in_app,
    email: addresses(d.email),
    email_assignee: d.email_assignee,
    webhooks: webhooksOf(d.webhooks),
  };
}

/** The retry schedule of the draft; null when it names none (the defaults apply). */
function retryOf(d: PolicyDraft) {
  const delays = d.retry_delays
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(numberOrText);
  const hours = d.retry_hours.trim();
  if (delays.length === 0 && hours === '') return null;
  return {
    ...(delays.length > 0 ? { delays_seconds: delays } : {}),
    ...(hours !== '' ? { give_up_after_hours: numberOrText(hours) } : {}),
  };
}

/** The fallback of the draft; null when it has none. */
function fallbackOf(d: PolicyDraft) {
  if (!d.fallback) return null;
  return {
    after_minutes: numberOrText(d.fallback_after_minutes),
    email: addresses(d.fallback_email),
    email_assignee: d.fallback_email_assignee,
    email_team_lead: d.fallback_email_team_lead,
    webhooks: webhooksOf(d.fallback_webhooks),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The alert_channels of a PATCH, or undefined when the form changed none of them. `retry`
 * and `fallback` are sent only when changed (null removes them): left out, the API keeps the
 * policy's own, fallback webhook secrets included.
 */
function channelsPatchOf(d: PolicyDraft, original: PolicyDraft) {
  const primaryChanged = !same(channelsOf(d), channelsOf(original));
  const retryChanged = !same(retryOf(d), retryOf(original));
  const fallbackChanged = !same(fallbackOf(d), fallbackOf(original));
  if (!primaryChanged && !retryChanged && !fallbackChanged) return undefined;
  return {
    ...channelsOf(d),
    ...(retryChanged ? { retry: retryOf(d) } : {}),
    ...(fallbackChanged ? { fallback: fallbackOf(d) } : {}),
  };
}

/** The alert_channels of a new policy. */
function newChannelsOf(d: PolicyDraft) {
  const retry = retryOf(d);
  const fallback = fallbackOf(d);
  return {
    ...channelsOf(d),
    ...(retry ? { retry } : {}),
    ...(fallback ? { fallback } : {}),
  };
}

function bodyOf(d: PolicyDraft) {
  return {
    name: d.name,
    priority: d.priority,
    requester_org: d.requester_org.trim() === '' ? null : d.requester_org,
    team_id: d.team_id === '' ? null : Number(d.team_id),
    first_response_minutes: numberOrText(d.first_response_minutes),
    resolution_minutes: numberOrText(d.resolution_minutes),
    next_reply_minutes:
      d.next_reply_minutes.trim() === '' ? null : numberOrText(d.next_reply_minutes),
    calendar_id: d.calendar_id === '' ? null : Number(d.calendar_id),
  };
}

const FIELD_PATHS =
  /^(name|priority|requester_org|team_id|first_response_minutes|resolution_minutes|next_reply_minutes|calendar_id|alert_channels(\.in_app|\.email_assignee|\.email.*|\.webhooks\[\d+\]\.(url|secret)|\.retry(\.delays_seconds.*|\.give_up_after_hours)?|\.fallback(\.after_minutes|\.email_assignee|\.email_team_lead|\.email.*|\.webhooks\[\d+\]\.(url|secret))?)?)$/;

/** View (any token) or edit (admin) one SLA policy; errors appear next to their fields. */
export function PolicyEditPage({ id, admin }: { id?: number; admin: boolean }) {
  const editing = id !== undefined;
  useTitle(editing ? 'SLA policy' : 'New SLA policy');
  const record = useQuery({ ...policyQuery(id ?? 0), enabled: editing });
  if (editing && !record.data) {
    return (
      <RecordLoading
        back="/policies"
        backText="← SLA policies"
        title="SLA policy"
        error={record.error ?? undefined}
      />
    );
  }
  return <PolicyForm id={id} policy={record.data} admin={admin} />;
}

/** The policy's form: it starts from the policy as loaded, so nothing typed is overwritten. */
function PolicyForm({ id, policy, admin }: { id?: number; policy?: Policy; admin: boolean }) {
  const editing = id !== undefined;
  const navigate = useNavigate();
  const [draft, setDraft] = useState<PolicyDraft>(() => (policy ? draftOf(policy) : NEW_POLICY));
  const [original, setOriginal] = useState<PolicyDraft | undefined>(() =>
    policy ? draftOf(policy) : undefined,
  );
  const [loaded, setLoaded] = useState<Policy | undefined>(policy);
  const save = useSave([keys.policies]);
  const { issues, setSaved, busy, run } = save;
  const calendars = useQuery({ ...calendarsQuery(), refetchInterval: 60_000 });
  const teams = useQuery({ ...teamsQuery(), refetchInterval: 60_000 });

  useEffect(() => {
    const first = calendars.data?.items[0];
    if (!editing && first && draft.calendar_id === '') {
      setDraft((d) => ({ ...d, calendar_id: String(first.id) }));
    }
  }, [editing, calendars.data, draft.calendar_id]);

  const set = <K extends keyof PolicyDraft>(key: K, value: PolicyDraft[K]) =>
    setDraft((d) => ({ ...d, [key]: value }));
  const setWebhook = (index: number, change: Partial<WebhookDraft>) =>
    setDraft((d) => ({
      ...d,
      webhooks: d.webhooks.map((w, i) => (i === index ? { ...w, ...change } : w)),
    }));
  const setFallbackWebhook = (index: number, change: Partial<WebhookDraft>) =>
    setDraft((d) => ({
      ...d,
      fallback_webhooks: d.fallback_webhooks.map((w, i) => (i === index ? { ...w, ...change } : w)),
    }));

  const channelsPatch = original ? channelsPatchOf(draft, original) : undefined;
  const secretsLost =
    editing &&
    channelsPatch !== undefined &&
    (draft.webhooks.some((w) => w.has_secret && w.secret === '') ||
      (channelsPatch.fallback !== undefined &&
        draft.fallback_webhooks.some((w) => w.has_secret && w.secret === '')));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      const body: Record<string, unknown> = bodyOf(draft);
      // a new policy may leave its name to the API; an emptied name is an error to show
      if (!editing && !body.name) delete body.name;
      if (editing && original) {
        const before = bodyOf(original) as Record<string, unknown>;
        for (const key of Object.keys(body)) if (body[key] === before[key]) delete body[key];
        if (channelsPatch) body.alert_channels = channelsPatch;
        if (Object.keys(body).length === 0) {
          setSaved('Nothing changed.');
          return;
        }
        const policy = await api<Policy>('PATCH', `/api/sla-policies/${id}`, body);
        setLoaded(policy);
        setDraft(draftOf(policy));
        setOriginal(draftOf(policy));
        setSaved('Saved.');
      } else {
        body.alert_channels = newChannelsOf(draft);
        const policy = await api<Policy>('POST', '/api/sla-policies', body);
        navigate(`/policies/${policy.id}`, { replace: true });
      }
    });
  };

  const title = editing ? (loaded ? loaded.name : 'SLA policy') : 'New SLA policy';
  const listError = (prefix: string, noun: string) =>
    issues
      .filter((i) => i.path === prefix || i.path.startsWith(`${prefix}[`))
      .map((i) => {
        const index = /\[(\d+)\]/.exec(i.path)?.[1];
        return index === undefined ? i.message : `${noun} ${Number(index) + 1}: ${i.message}`;
      })
      .join('; ');
  const emailError = listError('alert_channels.email', 'address');
  const emailId = fieldId('alert_channels.email');
  const fallbackEmailError = listError('alert_channels.fallback.email', 'address');
  const fallbackEmailId = fieldId('alert_channels.fallback.email');
  const delaysError = listError('alert_channels.retry.delays_seconds', 'delay');
  const delaysId = fieldId('alert_channels.retry.delays_seconds');

  return (
    <div className="page narrow-page">
      <p className="breadcrumb">
        <Link to="/policies">← SLA policies</Link>
      </p>
      <h1>{title}</h1>
      {!admin ? <p className="notice">Only an admin token can change policies.</p> : null}
      {loaded ? (
        <p className="muted small">Last changed {formatDateTime(loaded.updated_at)}</p>
      ) : null}
      <SaveFeedback save={save} knownPaths={(p) => FIELD_PATHS.test(p)} />
      <form onSubmit={submit} noValidate className="form">
        <fieldset disabled={!admin} className="plain-fieldset">
          <Field
            path="name"
            label="Name"
            issues={issues}
            hint={editing ? undefined : 'Optional: defaults to the priority and organisation.'}
          >
            {(aria) => (
              <input {...aria} value={draft.name} onChange={(e) => set('name', e.target.value)} />
            )}
          </Field>
          <div className="row">
            <Field path="priority" label="Priority" issues={issues}>
              {(aria) => (
                <select
                  {...aria}
                  value={draft.priority}
                  onChange={(e) => set('priority', e.target.value as Priority)}
                >
                  {PRIORITIES.map((p) => (
                    <option key={p} value={p}>
                      {label(p)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field
              path="requester_org"
              label="Requester organisation"
              issues={issues}
              hint="Empty: every organisation."
            >
              {(aria) => (
                <input
                  {...aria}
                  value={draft.requester_org}
                  onChange={(e) => set('requester_org', e.target.value)}
                />
              )}
            </Field>
            <Field path="team_id" label="Team" issues={issues} hint="Empty: every team.">
              {(aria) => (
                <select
                  {...aria}
                  value={draft.team_id}
                  onChange={(e) => set('team_id', e.target.value)}
                >
                  <option value="">Every team</option>
                  {(teams.data?.items ?? []).map((team) => (
                    <option key={team.id} value={String(team.id)}>
                      {team.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <div className="row">
            <Field
              path="first_response_minutes"
              label="First response target (business minutes)"
              issues={issues}
            >
              {(aria) => (
                <input
                  {...aria}
                  inputMode="numeric"
                  value={draft.first_response_minutes}
                  onChange={(e) => set('first_response_minutes', e.target.value)}
                />
              )}
            </Field>
            <Field
              path="resolution_minutes"
              label="Resolution target (business minutes)"
              issues={issues}
            >
              {(aria) => (
                <input
                  {...aria}
                  inputMode="numeric"
                  value={draft.resolution_minutes}
                  onChange={(e) => set('resolution_minutes', e.target.value)}
                />
              )}
            </Field>
            <Field
              path="next_reply_minutes"
              label="Next reply target (business minutes)"
              issues={issues}
              hint="After each requester reply. Empty: none."
            >
              {(aria) => (
                <input
                  {...aria}
                  inputMode="numeric"
                  value={draft.next_reply_minutes}
                  onChange={(e) => set('next_reply_minutes', e.target.value)}
                />
              )}
            </Field>
          </div>
          <Field path="calendar_id" label="Business calendar" issues={issues}>
            {(aria) => (
              <select
                {...aria}
                value={draft.calendar_id}
                onChange={(e) => set('calendar_id', e.target.value)}
              >
                {(calendars.data?.items ?? []).map((c) => (
                  <option key={c.id} value={String(c.id)}>
                    {c.always_open ? c.name : `${c.name} (${c.time_zone})`}
                  </option>
                ))}
              </select>
            )}
          </Field>

          <fieldset className="group">
            <legend>Alert channels</legend>
            <label className="check">
              <input
                type="checkbox"
                id={fieldId('alert_channels.in_app')}
                checked={draft.in_app}
                onChange={(e) => set('in_app', e.target.checked)}
              />
              In-app alert to the assignee (or the team when unassigned)
            </label>
            <label className="check">
              <input
                type="checkbox"
                id={fieldId('alert_channels.email_assignee')}
                checked={draft.email_assignee}
                onChange={(e) => set('email_assignee', e.target.checked)}
              />
              Email the assignee
            </label>
            <div className={`field${emailError ? ' has-error' : ''}`}>
              <label htmlFor={emailId}>Email recipients</label>
              <p className="hint" id={`${emailId}-hint`}>
                One address per line.
              </p>
              <textarea
                id={emailId}
                rows={3}
                value={draft.email}
                onChange={(e) => set('email', e.target.value)}
                aria-invalid={emailError ? true : undefined}
                aria-describedby={`${emailId}-hint${emailError ? ` ${emailId}-error` : ''}`}
              />
              <FieldError id={`${emailId}-error`} message={emailError || undefined} />
            </div>
            <div className="webhooks">
              <p className="label-like">Webhooks</p>
              {draft.webhooks.length === 0 ? <p className="muted small">None.</p> : null}
              {draft.webhooks.map((w, i) => {
                const base = `alert_channels.webhooks[${i}]`;
                return (
                  <div className="webhook-row" key={i}>
                    <Field path={`${base}.url`} label={`Webhook ${i + 1} URL`} issues={issues}>
                      {(aria) => (
                        <input
                          {...aria}
                          type="url"
                          value={w.url}
                          onChange={(e) => setWebhook(i, { url: e.target.value })}
                        />
                      )}
                    </Field>
                    <Field
                      path={`${base}.secret`}
                      label={`Webhook ${i + 1} secret`}
                      issues={issues}
                      hintAfter
                      hint={
                        w.has_secret
                          ? 'A secret is set. Re-enter it if you change the alert channels, or the calls go unsigned.'
                          : 'Optional, at least 16 characters: calls are signed with HMAC-SHA256.'
                      }
                    >
                      {(aria) => (
                        <input
                          {...aria}
                          type="password"
                          autoComplete="off"
                          value={w.secret}
                          onChange={(e) => setWebhook(i, { secret: e.target.value })}
                        />
                      )}
                    </Field>
                    <button
                      type="button"
                      className="secondary small"
                      onClick={() =>
                        setDraft((d) => ({ ...d, webhooks: d.webhooks.filter((_, j) => j !== i) }))
                      }
                    >
                      Remove webhook {i + 1}
                    </button>
                  </div>
                );
              })}
              <button
                type="button"
                className="secondary small"
                onClick={() =>
                  setDraft((d) => ({
                    ...d,
                    webhooks: [...d.webhooks, { url: '', secret: '', has_secret: false }],
                  }))
                }
              >
                Add a webhook
              </button>
            </div>
            {issueAt(issues, 'alert_channels') ? (
              <FieldError
                id={`${fieldId('alert_channels')}-error`}
                message={issueAt(issues, 'alert_channels')}
              />
            ) : null}
          </fieldset>

          <fieldset className="group">
            <legend>Retries</legend>
            <p className="muted small">
              A failing email or webhook is tried again after each delay (the last one repeats)
              until the horizon. Empty: after 1, 2, 5, 15, 30, 60, 120 s, then every 5 minutes, for
              24 hours.
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
              <Field
                path="alert_channels.retry.give_up_after_hours"
                label="Keep trying for (hours)"
                issues={issues}
              >
                {(aria) => (
                  <input
                    {...aria}
                    inputMode="decimal"
                    placeholder="24"
                    value={draft.retry_hours}
                    onChange={(e) => set('retry_hours', e.target.value)}
                  />
                )}
              </Field>
            </div>
            {issueAt(issues, 'alert_channels.retry') ? (
              <FieldError
                id={`${fieldId('alert_channels.retry')}-error`}
                message={issueAt(issues, 'alert_channels.retry')}
              />
            ) : null}
          </fieldset>

          <fieldset className="group">
            <legend>Fallback</legend>
            <label className="check">
              <input
                type="checkbox"
                id={fieldId('alert_channels.fallback')}
                checked={draft.fallback}
                onChange={(e) => set('fallback', e.target.checked)}
              />
              When the emails and webhooks above have not all delivered in time, alert these too
            </label>
            {draft.fallback ? (
              <>
                <Field
                  path="alert_channels.fallback.after_minutes"
                  label="Fall back after (minutes)"
                  issues={issues}
                  hint="Counted from the alert. Cancelled when every email and webhook above delivered first."
                >
                  {(aria) => (
                    <input
                      {...aria}
                      inputMode="decimal"
                      value={draft.fallback_after_minutes}
                      onChange={(e) => set('fallback_after_minutes', e.target.value)}
                    />
                  )}
                </Field>
                <label className="check">
                  <input
                    type="checkbox"
                    id={fieldId('alert_channels.fallback.email_assignee')}
                    checked={draft.fallback_email_assignee}
                    onChange={(e) => set('fallback_email_assignee', e.target.checked)}
                  />
                  Fall back to the assignee’s email
                </label>
                <label className="check">
                  <input
                    type="checkbox"
                    id={fieldId('alert_channels.fallback.email_team_lead')}
                    checked={draft.fallback_email_team_lead}
                    onChange={(e) => set('fallback_email_team_lead', e.target.checked)}
                  />
                  Fall back to the email of the ticket’s team lead
                </label>
                <div className={`field${fallbackEmailError ? ' has-error' : ''}`}>
                  <label htmlFor={fallbackEmailId}>Fallback email recipients</label>
                  <p className="hint" id={`${fallbackEmailId}-hint`}>
                    One address per line.
                  </p>
                  <textarea
                    id={fallbackEmailId}
                    rows={2}
                    value={draft.fallback_email}
                    onChange={(e) => set('fallback_email', e.target.value)}
                    aria-invalid={fallbackEmailError ? true : undefined}
                    aria-describedby={`${fallbackEmailId}-hint${fallbackEmailError ? ` ${fallbackEmailId}-error` : ''}`}
                  />
                  <FieldError
                    id={`${fallbackEmailId}-error`}
                    message={fallbackEmailError || undefined}
                  />
                </div>
                <div className="webhooks">
                  <p className="label-like">Fallback webhooks</p>
                  {draft.fallback_webhooks.length === 0 ? (
                    <p className="muted small">None.</p>
                  ) : null}
                  {draft.fallback_webhooks.map((w, i) => {
                    const base = `alert_channels.fallback.webhooks[${i}]`;
                    return (
                      <div className="webhook-row" key={i}>
                        <Field
                          path={`${base}.url`}
                          label={`Fallback webhook ${i + 1} URL`}
                          issues={issues}
                        >
                          {(aria) => (
                            <input
                              {...aria}
                              type="url"
                              value={w.url}
                              onChange={(e) => setFallbackWebhook(i, { url: e.target.value })}
                            />
                          )}
                        </Field>
                        <Field
                          path={`${base}.secret`}
                          label={`Fallback webhook ${i + 1} secret`}
                          issues={issues}
                          hintAfter
                          hint={
                            w.has_secret
                              ? 'A secret is set. Re-enter it if you change the fallback, or the calls go unsigned.'
                              : 'Optional, at least 16 characters: calls are signed with HMAC-SHA256.'
                          }
                        >
                          {(aria) => (
                            <input
                              {...aria}
                              type="password"
                              autoComplete="off"
                              value={w.secret}
                              onChange={(e) => setFallbackWebhook(i, { secret: e.target.value })}
                            />
                          )}
                        </Field>
                        <button
                          type="button"
                          className="secondary small"
                          onClick={() =>
                            setDraft((d) => ({
                              ...d,
                              fallback_webhooks: d.fallback_webhooks.filter((_, j) => j !== i),
                            }))
                          }
                        >
                          Remove fallback webhook {i + 1}
                        </button>
                      </div>
                    );
                  })}
                  <button
                    type="button"
                    className="secondary small"
                    onClick={() =>
                      setDraft((d) => ({
                        ...d,
                        fallback_webhooks: [
                          ...d.fallback_webhooks,
                          { url: '', secret: '', has_secret: false },
                        ],
                      }))
                    }
                  >
                    Add a fallback webhook
                  </button>
                </div>
              </>
            ) : null}
            {issueAt(issues, 'alert_channels.fallback') ? (
              <FieldError
                id={`${fieldId('alert_channels.fallback')}-error`}
                message={issueAt(issues, 'alert_channels.fallback')}
              />
            ) : null}
          </fieldset>
          {secretsLost ? (
            <p className="notice warn">
              Saving replaces the alert channels you changed: webhooks whose secret you do not
              re-enter will be called unsigned.
            </p>
          ) : null}
          {admin ? (
            <div className="actions">
              <button type="submit" className="primary" disabled={busy}>
                {busy ? 'Saving…' : editing ? 'Save policy' : 'Create policy'}
              </button>
            </div>
          ) : null}
        </fieldset>
      </form>
    </div>
  );
}
