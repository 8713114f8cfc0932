import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { LoadState, Section } from '../../components/layout.js';
import { agentsQuery, escalationPoliciesQuery, getQuery, keys } from '../../data/queries.js';
import { formatMinutes } from '../../format.js';
import { useTitle } from '../../hooks/use-title.js';
import type { Agent, EscalationPolicy } from '../../types.js';
import { levelTargetsText } from './draft.js';
import { PolicyForm } from './form.js';

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
        until someone acknowledges it (ticket page, inbox, the link in the email or chat message) or
        the SLA is met. A level notifies agents and posts to its email addresses, webhooks, Slack
        and Teams channels and PagerDuty services. A chain runs the levels it started with: editing
        a policy changes later breaches only.
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

/** A policy's levels in words; its form to edit (admin) or to read every field (others). */
function PolicyCard({
  policy,
  agents,
  admin,
}: {
  policy: EscalationPolicy;
  agents: Agent[];
  admin: boolean;
}) {
  const [open, setOpen] = useState(false);
  const schedules = useQuery(
    getQuery<{ items: { id: number; name: string }[] }>(keys.schedules, '/api/schedules'),
  );
  if (open) {
    return (
      <PolicyForm policy={policy} agents={agents} readOnly={!admin} onDone={() => setOpen(false)} />
    );
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
            → {levelTargetsText(level, agents, schedules.data?.items)}
          </li>
        ))}
      </ol>
      <button type="button" className="secondary small" onClick={() => setOpen(true)}>
        {admin ? 'Edit' : 'View'} {policy.name}
      </button>
    </article>
  );
}
