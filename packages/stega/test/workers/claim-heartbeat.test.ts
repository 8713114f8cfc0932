import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { deliveryClaimDue } from '../../src/delivery/ledger/claim-due.js';
import { deliveryLeaseRenew } from '../../src/delivery/ledger/renew.js';
import { createLogger } from '../../src/log.js';
import { breachUnderPolicy } from '../support/breach-under-policy.js';
import { agentInsert, calendarInsert24x7 } from '../support/fixtures.js';
import { mailScene } from '../support/mail-scene.js';
import { testDeliveries } from '../support/test-delivery.js';
import { startHoldingReceiver } from '../ui/holding-webhook.js';

const LEASE_SECONDS = 3;

/**
 * A live worker's heartbeat keeps the claims of the calls it is making, however long they
 * take; a lease that lapsed is not revived, and a row taken over is not renewed by the worker
 * that lost it. (A frozen worker's claims lapsing, across real processes: test/chaos/frozen-worker.)
 */
describe('claim heartbeat', async () => {
  const { pool, smtp, email } = await mailScene(6);
  const holding = await startHoldingReceiver();
  afterAll(() => holding.stop());
  const delivery = testDeliveries({
    pool,
    email,
    emailEndpoint: smtp.url,
    timeScale: 0.01,
    logger: createLogger('silent', 'test'),
  });
  const breachUnder = breachUnderPolicy({
    db: pool,
    calendarId: await calendarInsert24x7(pool),
    agentId: await agentInsert(pool, 'Hana Beat'),
    now: new Date(),
    label: 'heartbeat',
  });
  const rowOf = async (breachId: number) =>
    (
      await pool.query(
        `select id, status, attempts, claim_token, next_attempt_at, delivered_by
           from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1`,
        [breachId],
      )
    ).rows[0];

  it('renews the lease while a call hangs past it: no other worker can claim the delivery', async () => {
    const event = await breachUnder({ in_app: false, webhooks: [{ url: holding.url('/hold') }] });
    const worker = delivery('beating', { leaseSeconds: LEASE_SECONDS, webhookTimeoutMs: 120_000 });
    await worker.start({ type: 'breach', payload: event }, { batchId: 1n, eventId: 1n });
    await eventually(async () => holding.heldCount() === 1, 'the held call');
    const claimed = await rowOf(event.breach_id);
    expect(claimed).toMatchObject({ status: 'sending', attempts: 1 });
    // the first lease has run out, and the row is leased still: the heartbeat renewed it
    await eventually(async () => {
      const { rows } = await pool.query(
        `select now() > $2::timestamptz and next_attempt_at > now() as renewed
           from stega.alert_deliveries where id = $1`,
        [claimed?.id, claimed?.next_attempt_at],
      );
      return rows[0]?.renewed === true;
    }, 'a lease renewed past the first');
    expect(worker.heartbeat.holding).toBe(1);
    // another worker's retry loop finds nothing to take over
    const taken = await deliveryClaimDue(pool, 10, {
      token: randomUUID(),
      leaseSeconds: LEASE_SECONDS,
      owner: null,
    });
    expect(taken.map((row) => row.id)).not.toContain(claimed?.id);
    expect(await rowOf(event.breach_id)).toMatchObject({
      status: 'sending',
      attempts: 1,
      claim_token: claimed?.claim_token,
    });
    expect(holding.calls.filter((call) => call.path === '/hold')).toHaveLength(1);
    await holding.stop(); // the call fails at last; its outcome lands on its own claim
    await worker.drain();
    expect(worker.heartbeat.holding).toBe(0);
    expect(await rowOf(event.breach_id)).toMatchObject({
      status: 'retrying',
      attempts: 1,
      claim_token: null,
    });
  });

  it('revives no lapsed lease, and renews no claim taken over by another', async () => {
    const event = await breachUnder({ in_app: false, webhooks: [] });
    const token = { lapsed: randomUUID(), taken: randomUUID(), live: randomUUID() };
    const { rows } = await pool.query(
      `insert into stega.alert_deliveries
         (alert_type, alert_id, ticket_id, channel, recipient, fallback, endpoint, status,
          attempts, next_attempt_at, claim_token, payload)
       values ('breach', $1, $2, 'webhook', 'lapsed', false, 'lapsed', 'sending', 1,
               now() - interval '1 second', $3, '{}'),
              ('breach', $1, $2, 'webhook', 'taken', false, 'taken', 'sending', 2,
               now() + interval '1 hour', $4, '{}'),
              ('breach', $1, $2, 'webhook', 'live', false, 'live', 'sending', 1,
               now() + interval '1 second', $5, '{}')
       returning id, recipient`,
      [event.breach_id, event.ticket_id, token.lapsed, token.taken, token.live],
    );
    const id = Object.fromEntries(rows.map((r) => [String(r.recipient), Number(r.id)]));
    const renewed = await deliveryLeaseRenew(
      pool,
      [
        { id: Number(id.lapsed), token: token.lapsed },
        // the worker that lost this row holds its own, older token
        { id: Number(id.taken), token: randomUUID() },
        { id: Number(id.live), token: token.live },
      ],
      60,
    );
    expect(renewed).toEqual([id.live]);
  });
});
