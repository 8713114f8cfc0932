import { describe, expect, it } from 'vitest';
import { escalateDue } from '../../src/jobs/escalate-due.js';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';
import { teamScene } from './team-scene.js';

/**
 * The inbox's Acknowledge button follows the chain: an escalation level's in-app alert says
 * whether acknowledging still means something (`acknowledgeable`), and stops saying so once
 * anyone acknowledged the chain anywhere (here through the API, as a chat button or an
 * email link would).
 */
describe('in-app alerts say whether their escalation can still be acknowledged', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');

  it('acknowledgeable while the chain climbs, not once acknowledged elsewhere; never for other alerts', async () => {
    const s = await teamScene(t);
    const { ticketId, escalationId } = await s.escalatedTicket(s.blue.id);
    await escalateDue(t.pool, new Date('2026-03-10T00:00:00Z'));
    const firing = await t.pool.query(
      'select id from stega.escalation_firings where escalation_id = $1 order by level limit 1',
      [escalationId],
    );
    expect(firing.rows).toHaveLength(1);
    // the in-app alerts a worker writes for the level and for the breach
    await t.pool.query(
      `insert into stega.alerts (alert_type, alert_id, ticket_id, agent_id, message)
       values ('escalation', $1, $2, null, 'escalated'), ('breach', 424242, $2, null, 'overdue')`,
      [firing.rows[0]?.id, ticketId],
    );
    const flags = async (token = ADMIN_TOKEN) => {
      const page = await t.as(token, { method: 'GET', url: `/api/alerts?ticket_id=${ticketId}` });
      expect(page.status).toBe(200);
      return Object.fromEntries(
        page.body.items.map((a: { alert_type: string; acknowledgeable: boolean }) => [
          a.alert_type,
          a.acknowledgeable,
        ]),
      );
    };
    expect(await flags()).toEqual({ escalation: true, breach: false });
    expect(await flags(s.bruno.token)).toEqual({ escalation: true, breach: false });
    // Bruno acknowledges from elsewhere (the ticket page, a chat button, an email link)
    const ack = await t.as(s.bruno.token, {
      method: 'POST',
      url: `/api/tickets/${ticketId}/acknowledge`,
      payload: {},
    });
    expect(ack.status).toBe(200);
    expect(await flags()).toEqual({ escalation: false, breach: false });
  });
});
