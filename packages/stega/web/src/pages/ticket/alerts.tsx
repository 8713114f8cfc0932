import { DeliveryProgress } from '../../components/badges.js';
import { Section, TableRegion } from '../../components/layout.js';
import { formatDateTime, label } from '../../format.js';
import type { TicketDetail } from '../../types.js';
import { type Names, recipientLabel } from '../../words.js';

/**
 * Every alert of the ticket (breaches and warnings) and each of its deliveries, listed once:
 * channel, recipient in words, outcome, attempts and the replica that made it.
 */
export function AlertsSection({ ticket, names }: { ticket: TicketDetail; names: Names }) {
  const alertName = (type: string, id: number) => {
    if (type === 'escalation') {
      for (const chain of ticket.escalations) {
        const level = chain.levels.find((l) => l.firing_id === id);
        if (level) return `${label(chain.kind)} escalation, level ${level.level}`;
      }
      return 'Escalation level';
    }
    if (type === 'breach') {
      const breach = ticket.breaches.find((b) => b.id === id);
      return `${breach ? label(breach.kind) : 'SLA'} breach`;
    }
    const warning = ticket.warnings.find((w) => w.id === id);
    return `${warning ? label(warning.kind) : 'SLA'} warning${
      warning ? ` (${Math.round(warning.elapsed_share * 100)}% used)` : ''
    }`;
  };
  return (
    <Section fold id="deliveries" title={`Alerts and deliveries (${ticket.deliveries.length})`}>
      {ticket.warnings.length > 0 ? (
        <ul className="plain warnings">
          {ticket.warnings.map((w) => (
            <li key={w.id}>
              {label(w.kind)} warning
              {w.threshold === null ? '' : ` at ${Math.round(w.threshold * 1000) / 10} %`}:{' '}
              {Math.round(w.elapsed_share * 100)}% of the target used, detected{' '}
              {formatDateTime(w.detected_at)} (due {formatDateTime(w.due_at)})
            </li>
          ))}
        </ul>
      ) : null}
      {ticket.deliveries.length === 0 ? (
        <p className="muted">
          {ticket.breaches.length + ticket.warnings.length > 0
            ? 'Waiting for an sla-breach-worker to deliver the alerts…'
            : 'No alert for this ticket yet.'}
        </p>
      ) : (
        <TableRegion label="Alert deliveries">
          <table className="responsive deliveries">
            <caption className="visually-hidden">
              Each delivery of this ticket's alerts, with the replica that made it
            </caption>
            <thead>
              <tr>
                <th scope="col">Alert</th>
                <th scope="col">Channel</th>
                <th scope="col">Recipient</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Delivered by</th>
                <th scope="col">Delivered at</th>
              </tr>
            </thead>
            <tbody>
              {ticket.deliveries.map((d) => (
                <tr
                  key={d.id}
                  data-delivery-id={d.id}
                  data-alert={`${d.alert_type}-${d.alert_id}`}
                  data-channel={d.channel}
                  data-state={d.state}
                >
                  <td data-label="Alert">{alertName(d.alert_type, d.alert_id)}</td>
                  <td data-label="Channel">{channelLabel(d.channel)}</td>
                  <td data-label="Recipient" className="break">
                    {recipientLabel(d.recipient, names)}
                  </td>
                  <td data-label="Status">
                    <DeliveryProgress d={d} />
                  </td>
                  <td data-label="Attempts" className="num">
                    {d.attempts}
                  </td>
                  <td data-label="Delivered by" className="replica">
                    {d.delivered_by ?? '—'}
                  </td>
                  <td data-label="Delivered at">{formatDateTime(d.delivered_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </Section>
  );
}

const CHANNEL_LABELS: Record<string, string> = {
  in_app: 'In-app',
  email: 'Email',
  webhook: 'Webhook',
  slack: 'Slack',
  teams: 'Microsoft Teams',
  pagerduty: 'PagerDuty',
};

export function channelLabel(channel: string): string {
  return CHANNEL_LABELS[channel] ?? channel;
}
