import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.js';
import { Field, FieldError, fieldId, issueAt } from '../components/field.js';
import { TextField } from '../components/form-fields.js';
import { LoadState, Section } from '../components/layout.js';
import { SaveFeedback } from '../components/save-feedback.js';
import { agentsQuery, escalationPoliciesQuery, keys } from '../data/queries.js';
import { formatMinutes } from '../format.js';
import { useSave } from '../hooks/use-save.js';
import { useTitle } from '../hooks/use-title.js';
import type { Agent, EscalationPolicy } from '../types.js';

type Level = EscalationPolicy['levels'][number];

interface LevelDraft {
  delay: string;
  assignee: boolean;
  team: boolean;
  team_lead: boolean;
  agents: number[];
  /** Addresses, one a line (or comma-separated). */
  email: string;
  /** Webhook URLs, one a line; a URL the level had keeps its secret. */
  webhooks: string;
  /**
   * The level's other channels (Slack, Teams, PagerDuty, retry…), which this form does not
   * edit: sent back as loaded (an admin loads them unmasked), so a save keeps them.
   */
  other: Record<string, unknown>;
}

const EMPTY_LEVEL: LevelDraft = {
  delay: '0',
  assignee: true,
  team: false,
  team_lead: false,
  agents: [],
  email: '',
  webhooks: '',
  other: {},
};

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

function draftOf(level: Level): LevelDraft {
  const { email, webhooks, ...other } = level.targets.channels as {
    email?: string[];
    webhooks?: { url: string }[];
  };
  const channels = { email, webhooks };
  return {
    delay: String(level.delay_minutes),
    assignee: level.targets.assignee,
    team: level.targets.team,
    team_lead: level.targets.team_lead,
    agents: level.targets.agents,
    email: (channels.email ?? []).join('\n'),
    webhooks: (channels.webhooks ?? []).map((w) => w.url).join('\n'),
    other,
  };
}

function levelOf(d: LevelDraft) {
  const delay = d.delay.trim();
  return {
    delay_minutes: delay !== '' && Number.isFinite(Number(delay)) ? Number(delay) : delay,
    targets: {
      assignee: d.assignee,
      team: d.team,
      team_lead: d.team_lead,
      agents: d.agents,
      channels: {
        ...d.other,
        email: lines(d.email),
        webhooks: lines(d.webhooks).map((url) => ({ url })),
      },
    },
  };
}

/** Who a level notifies, in words. */
export function levelTargetsText(level: Level, agents: Agent[]): string {
  const t = level.targets;
  const channels = t.channels as Record<string, unknown[] | undefined> & { email?: string[] };
  const parts: string[] = [];
  if (t.assignee) parts.push('the assignee');
  if (t.team) parts.push('the team');
  if (t.team_lead) parts.push('the team lead');
  for (const id of t.agents) parts.push(agents.find((a) => a.id === id)?.name ?? `agent ${id}`);
  if (channels.email?.length) parts.push(channels.email.join(', '));
  for (const [key, noun] of [
    ['webhooks', 'webhook'],
    ['slack', 'Slack channel'],
    ['teams', 'Teams channel'],
    ['pagerduty', 'PagerDuty service'],
  ] as const) {
    const n = Array.isArray(channels[key]) ? (channels[key] as unknown[]).length : 0;
    if (n > 0) parts.push(`${n} ${noun}${n > 1 ? 's' : ''}`);
  }
  return parts.join(', ') || 'nobody';
}

/** Escalation policies: levels, each a delay after the breach and who it notifies. */
export function EscalationPoliciesPage({ admin }: { admin: boolean }) {
  useTitle('Escalation policies');
  const policies = useQuery({ ...escalationPoliciesQuery(), refetchInterval: 30_000 });
  const agents = useQuery({ ...agentsQuery(), refetchInterval: 60_000 });
  const list = policies.data?.items ?? [];
  const agentList = agents.data?.items ?? [];
  return (
    <div className="page">
      <h1>Escalation policies</h1>
      <p className="muted">
        An SLA policy may name one. A breach then climbs its levels, each a delay after the breach,
        until someone acknowledges it (ticket page, inbox, the link in the email) or the SLA is met.
        A chain runs the levels it started with: editing a policy changes later breaches only.
      </p>
      <Section id="escalation-policies" title={`Escalation policies (${list.length})`}>
        <LoadState
          loading={policies.isPending}
          error={policies.error}
          empty={list.length === 0}
          emptyText="No escalation policy yet."
        />
        {list.map((policy) => (
          <PolicyCard key={policy.id} policy={policy} agents={agentList} admin={admin} />
        ))}
        {admin ? <PolicyForm agents={agentList} /> : null}
      </Section>
    </div>
  );
}

function PolicyCard({
  policy,
  agents,
  admin,
}: {
  policy: EscalationPolicy;
  agents: Agent[];
  admin: boolean;
}) {
  const [editing, setEditing] = useState(false);
  if (editing) {
    return <PolicyForm policy={policy} agents={agents} onDone={() => setEditing(false)} />;
  }
  return (
    <article
      className="card"
      data-escalation-policy-id={policy.id}
      aria-label={`Escalation policy ${policy.name}`}
    >
      <h3>{policy.name}</h3>
      <ol className="levels">
        {policy.levels.map((level) => (
          <li key={level.level}>
            Level {level.level}:{' '}
            {level.delay_minutes === 0
              ? 'at the breach'
              : `${formatMinutes(level.delay_minutes)} after the breach`}{' '}
            → {levelTargetsText(level, agents)}
          </li>
        ))}
      </ol>
      {admin ? (
        <button type="button" className="secondary small" onClick={() => setEditing(true)}>
          Edit {policy.name}
        </button>
      ) : null}
    </article>
  );
}

function PolicyForm({
  policy,
  agents,
  onDone,
}: {
  policy?: EscalationPolicy;
  agents: Agent[];
  onDone?: () => void;
}) {
  const [name, setName] = useState(policy?.name ?? '');
  const [levels, setLevels] = useState<LevelDraft[]>(
    policy ? policy.levels.map(draftOf) : [EMPTY_LEVEL],
  );
  const save = useSave([keys.escalationPolicies]);
  const prefix = policy ? `escalation-${policy.id}` : 'new-escalation';
  const setLevel = (index: number, change: Partial<LevelDraft>) =>
    setLevels((all) => all.map((l, i) => (i === index ? { ...l, ...change } : l)));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save.run(async () => {
      const body = { name, levels: levels.map(levelOf) };
      const saved = policy
        ? await api<EscalationPolicy>('PATCH', `/api/escalation-policies/${policy.id}`, body)
        : await api<EscalationPolicy>('POST', '/api/escalation-policies', body);
      if (!policy) {
        setName('');
        setLevels([EMPTY_LEVEL]);
      }
      save.setSaved(`Escalation policy ${saved.name} saved.`);
      onDone?.();
    });
  };
  return (
    <form
      onSubmit={submit}
      noValidate
      className="form"
      aria-label={policy ? `Edit escalation policy ${policy.name}` : 'New escalation policy'}
    >
      <h3>{policy ? `Edit ${policy.name}` : 'Add an escalation policy'}</h3>
      <SaveFeedback save={save} knownPaths={() => false} />
      <TextField
        path="name"
        idPrefix={prefix}
        label="Policy name"
        issues={save.issues}
        value={name}
        onChange={setName}
      />
      {levels.map((level, i) => {
        const base = `levels[${i}]`;
        const targetsError = issueAt(save.issues, `${base}.targets`);
        return (
          <fieldset key={i} className="group" aria-label={`Level ${i}`}>
            <legend>Level {i}</legend>
            <TextField
              path={`${base}.delay_minutes`}
              idPrefix={prefix}
              label={`Level ${i} delay (minutes after the breach)`}
              issues={save.issues}
              value={level.delay}
              onChange={(delay) => setLevel(i, { delay })}
              input={{ inputMode: 'numeric' }}
            />
            <div className="row">
              {(['assignee', 'team', 'team_lead'] as const).map((key) => (
                <label key={key} className="check">
                  <input
                    type="checkbox"
                    checked={level[key]}
                    onChange={(e) => setLevel(i, { [key]: e.target.checked })}
                  />{' '}
                  {key === 'assignee' ? 'Assignee' : key === 'team' ? 'Team' : 'Team lead'}
                </label>
              ))}
            </div>
            {agents.length > 0 ? (
              <fieldset>
                <legend>Level {i} agents</legend>
                {agents.map((a) => (
                  <label key={a.id} className="checkbox">
                    <input
                      type="checkbox"
                      checked={level.agents.includes(a.id)}
                      onChange={(e) =>
                        setLevel(i, {
                          agents: e.target.checked
                            ? [...level.agents, a.id]
                            : level.agents.filter((id) => id !== a.id),
                        })
                      }
                    />{' '}
                    {a.name}
                  </label>
                ))}
              </fieldset>
            ) : null}
            <div className="row">
              <Field
                path={`${base}.targets.channels.email`}
                idPrefix={prefix}
                label={`Level ${i} email addresses`}
                issues={save.issues}
                hint="One a line."
              >
                {(aria) => (
                  <textarea
                    {...aria}
                    rows={2}
                    value={level.email}
                    onChange={(e) => setLevel(i, { email: e.target.value })}
                  />
                )}
              </Field>
              <Field
                path={`${base}.targets.channels.webhooks`}
                idPrefix={prefix}
                label={`Level ${i} webhook URLs`}
                issues={save.issues}
                hint="One a line; a URL kept keeps its secret."
              >
                {(aria) => (
                  <textarea
                    {...aria}
                    rows={2}
                    value={level.webhooks}
                    onChange={(e) => setLevel(i, { webhooks: e.target.value })}
                  />
                )}
              </Field>
            </div>
            <FieldError
              id={`${fieldId(`${prefix}.${base}.targets`)}-error`}
              message={targetsError}
            />
            {levels.length > 1 ? (
              <button
                type="button"
                className="secondary small"
                onClick={() => setLevels((all) => all.filter((_, j) => j !== i))}
              >
                Remove level {i}
              </button>
            ) : null}
          </fieldset>
        );
      })}
      <div className="actions">
        <button
          type="button"
          className="secondary"
          onClick={() =>
            setLevels((all) => [
              ...all,
              {
                ...EMPTY_LEVEL,
                assignee: false,
                delay: String((Number(all.at(-1)?.delay) || 0) + 30),
              },
            ])
          }
        >
          Add a level
        </button>
        <button type="submit" className="primary" disabled={save.busy}>
          {policy ? 'Save escalation policy' : 'Add escalation policy'}
        </button>
        {onDone && policy ? (
          <button type="button" className="secondary" onClick={onDone}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
