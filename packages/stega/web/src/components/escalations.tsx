import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../api.js';
import { keys } from '../data/queries.js';
import { formatDateTime, formatMinutes, label } from '../format.js';
import type { Escalation } from '../types.js';
import { Section } from './layout.js';

const STOPPED: Record<string, string> = {
  acknowledged: 'acknowledged',
  sla_met: 'stopped: the SLA target was met',
  resolved: 'stopped: the ticket was resolved',
  waiting: 'stopped: waiting on the customer',
  rescheduled: 'stopped: its due time moved',
};

/** Acknowledges every running escalation of a ticket (the ticket page and the inbox). */
export function useAcknowledgeTicket() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (ticketId: number) =>
      api<{ items: { changed: boolean }[] }>('POST', `/api/tickets/${ticketId}/acknowledge`, {
        via: 'app',
      }),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: keys.tickets }),
        client.invalidateQueries({ queryKey: keys.alerts }),
      ]),
  });
}

/** The ticket's escalation chains: each level, when it fires or fired and to whom; acknowledge. */
export function EscalationsSection({
  ticketId,
  escalations,
}: {
  ticketId: number;
  escalations: Escalation[];
}) {
  const acknowledge = useAcknowledgeTicket();
  if (escalations.length === 0) return null;
  const running = escalations.some((e) => e.stopped_at === null);
  return (
    // a running chain keeps its Acknowledge button in sight; a finished one folds on a phone
    <Section fold={!running} id="escalations" title={`Escalations (${escalations.length})`}>
      {running ? (
        <p>
          <button
            type="button"
            className="primary"
            disabled={acknowledge.isPending}
            onClick={() => acknowledge.mutate(ticketId)}
          >
            Acknowledge
          </button>{' '}
          <span className="muted">stops the escalation: no further level is notified.</span>
        </p>
      ) : null}
      {acknowledge.error ? (
        <p className="notice error" role="alert">
          {acknowledge.error.message}
        </p>
      ) : null}
      {escalations.map((e) => (
        <article
          key={e.id}
          className="card escalation"
          data-escalation-id={e.id}
          data-state={e.state}
          aria-label={`Escalation of the ${label(e.kind)} breach`}
        >
          <h3>
            {label(e.kind)} breach · {e.policy_name}
          </h3>
          <p data-testid="escalation-state">
            {e.stop_reason === 'acknowledged'
              ? `Acknowledged by ${e.acknowledged_by ?? 'someone'} at ${formatDateTime(
                  e.acknowledged_at,
                )}${e.acknowledged_via ? ` (${e.acknowledged_via === 'app' ? 'in the app' : `by ${e.acknowledged_via}`})` : ''}`
              : e.stopped_at
                ? `${label(STOPPED[e.stop_reason ?? ''] ?? 'stopped')} at ${formatDateTime(e.stopped_at)}`
                : e.state === 'complete'
                  ? 'Every level notified; not acknowledged yet'
                  : `Climbing: level ${e.next_level} at ${formatDateTime(e.next_at)}`}
          </p>
          <ol className="levels">
            {e.levels.map((level) => (
              <li key={level.level} data-level={level.level} data-fired={level.fired_at !== null}>
                Level {level.level} (
                {level.delay_minutes === 0
                  ? 'at the breach'
                  : `${formatMinutes(level.delay_minutes)} after`}
                ):{' '}
                {level.fired_at
                  ? `notified ${formatDateTime(level.fired_at)}${
                      level.notified_agents.length > 0
                        ? ` → ${level.notified_agents.map((a) => a.name).join(', ')}`
                        : ''
                    }`
                  : e.stopped_at
                    ? 'not notified'
                    : `due ${formatDateTime(level.fire_at)}`}
              </li>
            ))}
          </ol>
        </article>
      ))}
    </Section>
  );
}
