import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { ApiError, api, type Issue } from '../api.js';
import { ErrorSummary } from '../components/field.js';
import { SelectField, TextField } from '../components/form-fields.js';
import { useTitle } from '../hooks/use-title.js';
import type { Session } from '../types.js';

interface ContactMethod {
  id: number;
  method: 'email' | 'sms' | 'voice' | 'push' | 'slack_dm';
  address: string;
  label: string | null;
  verified: boolean;
  invalid_reason?: string | null;
}
interface Step {
  method: string;
  delay_minutes: number;
}
interface Rules {
  high?: Step[];
  low?: Step[];
}
interface QuietHours {
  start: string | null;
  end: string | null;
  time_zone?: string;
}
interface LogEntry {
  delivery_id: number;
  ticket_id: number;
  method: string;
  status: string;
  scheduled_at: string | null;
  held_until: string | null;
  digest_of: number | null;
  delivered_at: string | null;
  receipts: { status: string; reported_at: string }[];
  created_at: string;
}

const METHOD_WORDS: Record<string, string> = {
  in_app: 'In-app',
  email: 'Email',
  sms: 'SMS',
  voice: 'Voice call',
  push: 'Web push',
  slack_dm: 'Slack direct message',
};
const ADDABLE = [
  { value: 'sms', label: 'SMS (a phone number, +14155550123)' },
  { value: 'voice', label: 'Voice call (a phone number)' },
  { value: 'slack_dm', label: 'Slack direct message (your member id, U…)' },
  { value: 'email', label: 'Email (any address: a code is mailed to it)' },
];
const RULE_CHOICES = Object.entries(METHOD_WORDS).map(([value, label]) => ({ value, label }));

const issuesOf = (error: unknown, path: string): Issue[] =>
  error instanceof ApiError && error.issues.length > 0
    ? error.issues
    : [{ path, message: (error as Error).message }];

/**
 * "How to reach me": your contact methods (each verified before Stega uses it), your
 * notification rules per urgency (steps of method and delay; none: your team's default), and
 * your notification log (what was sent, how, when, and what the provider reported).
 */
export function ReachMePage({ session }: { session: Session }) {
  useTitle('How to reach me');
  const agentId = session.agent_id;
  if (agentId === null) {
    return (
      <div className="page narrow-page">
        <h1>How to reach me</h1>
        <p className="muted">This credential belongs to no agent: nobody to reach.</p>
      </div>
    );
  }
  return (
    <div className="page narrow-page">
      <h1>How to reach me</h1>
      <ContactMethods agentId={agentId} />
      <RulesEditor agentId={agentId} />
      <QuietHoursEditor agentId={agentId} />
      <NotificationLog agentId={agentId} />
    </div>
  );
}

function ContactMethods({ agentId }: { agentId: number }) {
  const base = `/api/agents/${agentId}/contact-methods`;
  const [methods, setMethods] = useState<ContactMethod[]>([]);
  const [method, setMethod] = useState('sms');
  const [address, setAddress] = useState('');
  const [codes, setCodes] = useState<Record<number, string>>(codeFromLink);
  const [issues, setIssues] = useState<Issue[]>([]);
  // a refused code (or a new code refused) is said next to its method, not in the add form
  const [codeRefusal, setCodeRefusal] = useState<{ id: number; message: string }>();
  const load = useCallback(async () => {
    setMethods((await api<{ items: ContactMethod[] }>('GET', base)).items);
  }, [base]);
  useEffect(() => {
    load().catch(() => undefined);
  }, [load]);
  // the service worker hands over the code of a test push as it shows it
  useEffect(() => {
    if (!('serviceWorker' in navigator)) return;
    const listener = (event: MessageEvent) => {
      const data = event.data as { type?: string; contact_method_id?: number; code?: string };
      if (data?.type !== 'stega-push-verify' || !data.contact_method_id || !data.code) return;
      const id = data.contact_method_id;
      setCodes((now) => ({ ...now, [id]: String(data.code) }));
    };
    navigator.serviceWorker.addEventListener('message', listener);
    return () => navigator.serviceWorker.removeEventListener('message', listener);
  }, []);
  const add = async (event: FormEvent) => {
    event.preventDefault();
    setIssues([]);
    try {
      await api('POST', base, { method, address: address.trim() });
      setAddress('');
      await load();
    } catch (error) {
      setIssues(issuesOf(error, 'address'));
    }
  };
  const refuseCode = (id: number, error: unknown) =>
    setCodeRefusal({ id, message: issuesOf(error, 'code')[0]?.message ?? String(error) });
  const verify = async (id: number) => {
    setCodeRefusal(undefined);
    try {
      await api('POST', `${base}/${id}/verify`, { code: (codes[id] ?? '').trim() });
      await load();
    } catch (error) {
      refuseCode(id, error);
    }
  };
  // a new code (the old one stops counting); refused past the hour's limit, said at `code`
  const resend = async (id: number) => {
    setCodeRefusal(undefined);
    try {
      await api('POST', `${base}/${id}/resend`);
      setCodes((now) => ({ ...now, [id]: '' }));
    } catch (error) {
      refuseCode(id, error);
    }
  };
  const remove = async (id: number) => {
    await api('DELETE', `${base}/${id}`);
    await load();
  };
  return (
    <section className="form" aria-labelledby="methods-heading">
      <h2 id="methods-heading">Contact methods</h2>
      <p className="muted">
        Stega uses a method only once it is verified: a number or an email address by the code it
        receives (your sign-in address needs none), a browser by confirming its test notification, a
        Slack id by pressing “link me” in the message from the Stega app.
      </p>
      <ul className="contact-methods">
        {methods.map((m) => (
          <li key={m.id}>
            {METHOD_WORDS[m.method]}: <code>{m.address}</code>{' '}
            {m.label ? <span className="muted">({m.label}) </span> : null}
            {m.verified ? (
              <span className="badge ok">verified</span>
            ) : m.invalid_reason ? (
              <span className="badge warn" title={m.invalid_reason}>
                gone: enable push again
              </span>
            ) : (
              <span className="badge warn">not verified</span>
            )}
            {!m.verified &&
            !m.invalid_reason &&
            (m.method === 'sms' ||
              m.method === 'voice' ||
              m.method === 'push' ||
              m.method === 'email') ? (
              <>
                {' '}
                <input
                  aria-label={`Code for ${m.address}`}
                  placeholder={m.method === 'push' ? 'code shown in the push' : '6-digit code'}
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  aria-invalid={codeRefusal?.id === m.id ? true : undefined}
                  aria-describedby={codeRefusal?.id === m.id ? `code-error-${m.id}` : undefined}
                  value={codes[m.id] ?? ''}
                  onChange={(e) => setCodes({ ...codes, [m.id]: e.target.value })}
                />{' '}
                <button type="button" className="secondary" onClick={() => verify(m.id)}>
                  {m.method === 'push' ? 'Confirm' : 'Verify'}
                </button>{' '}
                <button type="button" className="link-button" onClick={() => resend(m.id)}>
                  {m.method === 'push' ? 'Send a new test push' : 'Send a new code'}
                </button>
              </>
            ) : null}{' '}
            <button type="button" className="link-button" onClick={() => remove(m.id)}>
              Remove
            </button>
            {codeRefusal?.id === m.id ? (
              <p className="field-error" role="alert" id={`code-error-${m.id}`}>
                <span aria-hidden="true">⚠ </span>
                Code: {codeRefusal.message}
              </p>
            ) : null}
          </li>
        ))}
      </ul>
      <PushOnThisBrowser base={base} onAdded={load} />
      <form onSubmit={add} noValidate aria-label="Add a contact method">
        <SelectField
          path="method"
          label="Method"
          issues={issues}
          value={method}
          onChange={setMethod}
          choices={ADDABLE}
        />
        <TextField
          path="address"
          label="Address"
          issues={issues}
          value={address}
          onChange={setAddress}
        />
        <div className="actions">
          <button type="submit" className="primary">
            Add and verify
          </button>
        </div>
      </form>
    </section>
  );
}

/** `?verify=<method id>&code=<code>`: a test push's notification was clicked. */
function codeFromLink(): Record<number, string> {
  const query = new URLSearchParams(window.location.search);
  const id = Number(query.get('verify'));
  const code = query.get('code');
  return Number.isSafeInteger(id) && id > 0 && code && /^\d{6}$/.test(code) ? { [id]: code } : {};
}

/** The VAPID key in base64url as PushManager.subscribe takes it. */
function keyBytes(base64url: string): Uint8Array {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

type PushState =
  | { kind: 'unsupported'; why: string }
  | { kind: 'idle' }
  | { kind: 'working' }
  | { kind: 'sent' }
  | { kind: 'failed'; message: string };

/**
 * "Push notifications on this browser": registers the service worker (/sw.js), asks for
 * permission, subscribes with Stega's VAPID key and adds the subscription as a push contact
 * method; Stega then sends a test push whose code the service worker hands back here.
 */
function PushOnThisBrowser({ base, onAdded }: { base: string; onAdded: () => Promise<void> }) {
  const [state, setState] = useState<PushState>(() =>
    !window.isSecureContext
      ? { kind: 'unsupported', why: 'push needs Stega served over https (or on localhost)' }
      : !('serviceWorker' in navigator) || !('PushManager' in window)
        ? { kind: 'unsupported', why: 'this browser has no web push' }
        : { kind: 'idle' },
  );
  const enable = async () => {
    setState({ kind: 'working' });
    try {
      const registration = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
      await navigator.serviceWorker.ready;
      if ((await Notification.requestPermission()) !== 'granted') {
        setState({ kind: 'failed', message: 'notifications are blocked for this site' });
        return;
      }
      const { public_key } = await api<{ public_key: string }>('GET', '/api/web-push/key');
      const existing = await registration.pushManager.getSubscription();
      const subscription =
        existing ??
        (await registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: keyBytes(public_key) as BufferSource,
        }));
      await api('POST', base, {
        method: 'push',
        subscription: subscription.toJSON(),
        label: navigator.userAgent.includes('Mobile') ? 'phone browser' : 'desktop browser',
      });
      await onAdded();
      setState({ kind: 'sent' });
    } catch (error) {
      setState({ kind: 'failed', message: (error as Error).message });
    }
  };
  return (
    <div className="push-enable" aria-live="polite">
      <h3>Push notifications on this browser</h3>
      {state.kind === 'unsupported' ? (
        <p className="muted">Not available: {state.why}.</p>
      ) : (
        <>
          <p className="muted">
            Pages show as notifications with <strong>Acknowledge</strong> and <strong>Open</strong>,
            even with Stega closed.
          </p>
          <button
            type="button"
            className="secondary"
            disabled={state.kind === 'working'}
            onClick={enable}
          >
            Enable push on this browser
          </button>
          {state.kind === 'sent' ? (
            <p className="notice ok" role="status">
              A test notification is on its way: its code appears above; press Confirm.
            </p>
          ) : null}
          {state.kind === 'failed' ? (
            <p className="field-error" role="alert">
              {state.message}
            </p>
          ) : null}
        </>
      )}
    </div>
  );
}

/** A step as the form holds it: the delay as typed, read when the rules are saved. */
interface StepDraft {
  method: Step['method'];
  delay: string;
}
type Drafts = Record<'high' | 'low', StepDraft[]>;

const draftsOf = (rules: Rules): Drafts => ({
  high: (rules.high ?? []).map((s) => ({ method: s.method, delay: String(s.delay_minutes) })),
  low: (rules.low ?? []).map((s) => ({ method: s.method, delay: String(s.delay_minutes) })),
});

function RulesEditor({ agentId }: { agentId: number }) {
  const url = `/api/agents/${agentId}/notification-rules`;
  const [drafts, setDrafts] = useState<Drafts>({ high: [], low: [] });
  const [issues, setIssues] = useState<Issue[]>([]);
  const [failure, setFailure] = useState<string>();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    api<Rules>('GET', url)
      .then((rules) => setDrafts(draftsOf(rules)))
      .catch(() => undefined);
  }, [url]);
  const change = (urgency: 'high' | 'low', steps: StepDraft[]) => {
    setSaved(false);
    setDrafts({ ...drafts, [urgency]: steps });
  };
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setIssues([]);
    setFailure(undefined);
    setSaved(false);
    // a delay that is not a number is said at its field, not sent as 0
    const wrong: Issue[] = [];
    const stepsOf = (urgency: 'high' | 'low') =>
      drafts[urgency].map((step, i) => {
        const minutes = step.delay.trim() === '' ? Number.NaN : Number(step.delay);
        if (!Number.isFinite(minutes) || minutes < 0) {
          wrong.push({
            path: `${urgency}.${i}.delay_minutes`,
            message: 'must be a number of minutes, 0 or more',
          });
        }
        return { method: step.method, delay_minutes: minutes };
      });
    const body = { high: stepsOf('high'), low: stepsOf('low') };
    if (wrong.length > 0) {
      setIssues(wrong);
      setFailure('Some delays are not numbers of minutes.');
      return;
    }
    try {
      setDrafts(draftsOf(await api<Rules>('PUT', url, body)));
      setSaved(true);
    } catch (error) {
      setIssues(issuesOf(error, 'high'));
      setFailure((error as Error).message);
    }
  };
  return (
    <form className="form" onSubmit={save} noValidate aria-labelledby="rules-heading">
      <h2 id="rules-heading">Notification rules</h2>
      <p className="muted">
        When you are paged, each step reaches you by its method that many minutes later, until
        someone acknowledges. No steps: your team’s default applies.
      </p>
      <ErrorSummary issues={issues} message={failure} />
      {saved ? (
        <p className="notice ok" role="status">
          Saved.
        </p>
      ) : null}
      {(['high', 'low'] as const).map((urgency) => {
        const steps = drafts[urgency];
        return (
          <fieldset key={urgency}>
            <legend>
              {urgency === 'high'
                ? 'High urgency (breaches, escalations)'
                : 'Low urgency (warnings)'}
            </legend>
            {steps.map((step, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: steps are edited in place, by position
              <div key={i} className="rule-step">
                <SelectField
                  path={`${urgency}.${i}.method`}
                  label={`Step ${i + 1}`}
                  issues={issues}
                  value={step.method}
                  onChange={(value) =>
                    change(
                      urgency,
                      steps.map((s, j) => (j === i ? { ...s, method: value } : s)),
                    )
                  }
                  choices={RULE_CHOICES}
                />
                <TextField
                  path={`${urgency}.${i}.delay_minutes`}
                  label="after (minutes)"
                  issues={issues}
                  value={step.delay}
                  onChange={(value) =>
                    change(
                      urgency,
                      steps.map((s, j) => (j === i ? { ...s, delay: value } : s)),
                    )
                  }
                  input={{ inputMode: 'numeric' }}
                />
                <button
                  type="button"
                  className="link-button"
                  onClick={() =>
                    change(
                      urgency,
                      steps.filter((_, j) => j !== i),
                    )
                  }
                >
                  Remove step
                </button>
              </div>
            ))}
            <button
              type="button"
              className="secondary"
              onClick={() =>
                change(urgency, [...steps, { method: 'sms', delay: steps.at(-1)?.delay ?? '0' }])
              }
            >
              Add a step
            </button>
          </fieldset>
        );
      })}
      <div className="actions">
        <button type="submit" className="primary">
          Save rules
        </button>
      </div>
    </form>
  );
}

/** Quiet hours for low urgency: warnings due in them wait, and come as one digest at their end. */
function QuietHoursEditor({ agentId }: { agentId: number }) {
  const url = `/api/agents/${agentId}/quiet-hours`;
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [zone, setZone] = useState('');
  const [issues, setIssues] = useState<Issue[]>([]);
  const [saved, setSaved] = useState(false);
  const show = useCallback((hours: QuietHours) => {
    setStart(hours.start ?? '');
    setEnd(hours.end ?? '');
    setZone(hours.time_zone ?? '');
  }, []);
  useEffect(() => {
    api<QuietHours>('GET', url)
      .then(show)
      .catch(() => undefined);
  }, [url, show]);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setIssues([]);
    setSaved(false);
    try {
      show(
        await api<QuietHours>('PUT', url, {
          start: start.trim() === '' ? null : start.trim(),
          end: end.trim() === '' ? null : end.trim(),
        }),
      );
      setSaved(true);
    } catch (error) {
      setIssues(issuesOf(error, 'start'));
    }
  };
  return (
    <form className="form" onSubmit={save} noValidate aria-labelledby="quiet-heading">
      <h2 id="quiet-heading">Quiet hours</h2>
      <p className="muted">
        Quiet hours for warnings (low urgency){zone ? `, times in ${zone}` : ''}. Breaches and
        escalations are never held. Leave both empty for none. A warning that comes in these hours
        waits, and at their end the ones held come together in one message per method.
      </p>
      {saved ? (
        <p className="notice ok" role="status">
          Saved.
        </p>
      ) : null}
      <TextField
        path="start"
        label="From (HH:MM)"
        issues={issues}
        value={start}
        onChange={(value) => {
          setSaved(false);
          setStart(value);
        }}
        input={{ placeholder: '22:00' }}
      />
      <TextField
        path="end"
        label="Until (HH:MM)"
        issues={issues}
        value={end}
        onChange={(value) => {
          setSaved(false);
          setEnd(value);
        }}
        input={{ placeholder: '07:00' }}
      />
      <div className="actions">
        <button type="submit" className="primary">
          Save quiet hours
        </button>
      </div>
    </form>
  );
}

/** A log line's state: `held until 07:00` for a warning waiting for the quiet hours' end. */
function stateWords(item: LogEntry): string {
  if (item.held_until && item.status === 'scheduled') {
    const until = new Date(item.held_until).toLocaleTimeString([], {
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    return `held until ${until}`;
  }
  // a held row is sent in its quiet hours' digest (its own send, or another's)
  if (item.held_until && item.status !== 'cancelled') return `${item.status} (in a digest)`;
  return item.status;
}

function NotificationLog({ agentId }: { agentId: number }) {
  const [items, setItems] = useState<LogEntry[]>([]);
  useEffect(() => {
    api<{ items: LogEntry[] }>('GET', `/api/agents/${agentId}/notification-log`)
      .then((log) => setItems(log.items))
      .catch(() => undefined);
  }, [agentId]);
  return (
    <section aria-labelledby="log-heading">
      <h2 id="log-heading">Notification log</h2>
      {items.length === 0 ? (
        <p className="muted">Nothing sent to you yet.</p>
      ) : (
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">Ticket</th>
              <th scope="col">Method</th>
              <th scope="col">State</th>
              <th scope="col">Sent</th>
              <th scope="col">Receipts</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.delivery_id}>
                <td>
                  <a href={`/tickets/${item.ticket_id}`}>#{item.ticket_id}</a>
                </td>
                <td>{METHOD_WORDS[item.method] ?? item.method}</td>
                <td>{stateWords(item)}</td>
                <td>{item.delivered_at ? new Date(item.delivered_at).toLocaleString() : '—'}</td>
                <td>{item.receipts.map((r) => r.status).join(' → ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
