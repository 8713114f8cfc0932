import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../../api.js';
import { WithRecord } from '../../components/record-loading.js';
import { SaveFeedback } from '../../components/save-feedback.js';
import { calendarsQuery, keys, policyQuery } from '../../data/queries.js';
import { formatDateTime } from '../../format.js';
import { useSave } from '../../hooks/use-save.js';
import { useTitle } from '../../hooks/use-title.js';
import type { Policy } from '../../types.js';
import {
  bodyOf,
  channelsPatchOf,
  draftOf,
  FIELD_PATHS,
  NEW_POLICY,
  newChannelsOf,
  type PolicyDraft,
  type SetDraft,
} from './draft.js';
import { ChannelsSection, ChatChannelsSection, FallbackSection, RetrySection } from './sections.js';
import { TargetFields, WarningFields } from './target-fields.js';

/** The fields whose change moves the clocks running under the policy (unless apply_to says not). */
const CLOCK_KEYS = [
  'first_response_minutes',
  'resolution_minutes',
  'next_reply_minutes',
  'calendar_id',
  'warning_thresholds',
];

/** View (any token) or edit (admin) one SLA policy; errors appear next to their fields. */
export function PolicyEditPage({ id, admin }: { id?: number; admin: boolean }) {
  const editing = id !== undefined;
  useTitle(editing ? 'SLA policy' : 'New SLA policy');
  return (
    <WithRecord
      id={id}
      query={policyQuery}
      back="/policies"
      backText="← SLA policies"
      title="SLA policy"
    >
      {(policy) => <PolicyForm id={id} policy={policy} admin={admin} />}
    </WithRecord>
  );
}

/** The policy's form: it starts from the policy as loaded, so nothing typed is overwritten. */
function PolicyForm({ id, policy, admin }: { id?: number; policy?: Policy; admin: boolean }) {
  const editing = id !== undefined;
  const navigate = useNavigate();
  const [draft, setDraft] = useState<PolicyDraft>(() => (policy ? draftOf(policy) : NEW_POLICY));
  const [loaded, setLoaded] = useState<Policy | undefined>(policy);
  // what the saved policy holds, to send only what changed
  const original = useMemo(() => (loaded ? draftOf(loaded) : undefined), [loaded]);
  const save = useSave([keys.policies]);
  const { issues, setSaved, busy, run } = save;
  const calendars = useQuery({ ...calendarsQuery(), refetchInterval: 60_000 });

  // a new policy starts on the first calendar
  useEffect(() => {
    const first = calendars.data?.items[0];
    if (!editing && first && draft.calendar_id === '') {
      setDraft((d) => ({ ...d, calendar_id: String(first.id) }));
    }
  }, [editing, calendars.data, draft.calendar_id]);

  const set: SetDraft = (key, value) => setDraft((d) => ({ ...d, [key]: value }));

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
        for (const key of Object.keys(body)) {
          if (JSON.stringify(body[key]) === JSON.stringify(before[key])) delete body[key];
        }
        if (channelsPatch) body.alert_channels = channelsPatch;
        if (Object.keys(body).length === 0) {
          setSaved('Nothing changed.');
          return;
        }
        // new targets, thresholds or a calendar: the running clocks follow unless told not to
        if (CLOCK_KEYS.some((key) => key in body) && draft.apply_to === 'new_tickets_only') {
          body.apply_to = 'new_tickets_only';
        }
        const saved = await api<Policy>('PATCH', `/api/sla-policies/${id}`, body, {
          ifMatch: loaded?.revision,
        });
        setLoaded(saved);
        setDraft(draftOf(saved));
        setSaved('Saved.');
      } else {
        body.alert_channels = newChannelsOf(draft);
        const created = await api<Policy>('POST', '/api/sla-policies', body);
        navigate(`/policies/${created.id}`, { replace: true });
      }
    });
  };

  // someone else saved first (412): start again from their version
  const reload = () =>
    save.reload(async () => {
      const fresh = await api<Policy>('GET', `/api/sla-policies/${id}`);
      setLoaded(fresh);
      setDraft(draftOf(fresh));
    });

  const sectionProps = { draft, set, issues };
  return (
    <div className="page narrow-page">
      <p className="breadcrumb">
        <Link to="/policies">← SLA policies</Link>
      </p>
      <h1>{editing ? (loaded?.name ?? 'SLA policy') : 'New SLA policy'}</h1>
      {!admin ? <p className="notice">Only an admin token can change policies.</p> : null}
      {loaded ? (
        <p className="muted small">Last changed {formatDateTime(loaded.updated_at)}</p>
      ) : null}
      <SaveFeedback
        save={save}
        knownPaths={(p) => FIELD_PATHS.test(p)}
        onReload={editing ? reload : undefined}
      />
      <form onSubmit={submit} noValidate className="form">
        <fieldset disabled={!admin} className="plain-fieldset">
          <TargetFields {...sectionProps} editing={editing} calendars={calendars.data?.items} />
          <WarningFields {...sectionProps} editing={editing} />
          <ChannelsSection {...sectionProps} />
          <ChatChannelsSection {...sectionProps} />
          <RetrySection {...sectionProps} />
          <FallbackSection {...sectionProps} />
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
