import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startAnyReceiver } from '../../../../test-support/service-receivers.js';
import { deliveryListOutstanding } from '../../src/db/deliveries.js';
import { createLogger } from '../../src/log.js';
import { breachUnderPolicy } from '../support/breach-under-policy.js';
import { agentInsert, calendarInsert24x7 } from '../support/fixtures.js';
import { mailScene } from '../support/mail-scene.js';
import { testDeliveries } from '../support/test-delivery.js';

/**
 * Issue 22: each attempt's outcome is recorded as typed fields (`last_outcome`) beside its
 * words (`last_error`), and the read the API and the UI use carries them: a failure's kind
 * and its status, Retry-After instant or error code; no one reads the words for meaning.
 */
describe('typed outcomes in the ledger', async () => {
  const { pool, smtp, email } = await mailScene(4);
  const receiver = await startAnyReceiver();
  afterAll(() => receiver.stop());
  const delivery = testDeliveries({
    pool,
    email,
    emailEndpoint: smtp.url,
    timeScale: 0.01,
    logger: createLogger('silent', 'test'),
  })('typed');
  const breachUnder = breachUnderPolicy({
    db: pool,
    calendarId: await calendarInsert24x7(pool),
    agentId: await agentInsert(pool, 'Tia Typed'),
    now: new Date(),
    label: 'typed',
  });
  const closedPort = await new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
  let events = 0;
  const outcomeOf = async (url: string) => {
    const event = await breachUnder({ in_app: false, webhooks: [{ url }] });
    events += 1;
    await delivery.deliver(
      { type: 'breach', payload: event },
      { batchId: BigInt(events), eventId: BigInt(events) },
    );
    const { rows } = await pool.query(
      `select status, last_outcome, last_error from stega.alert_deliveries
        where alert_type = 'breach' and alert_id = $1`,
      [event.breach_id],
    );
    return rows[0];
  };

  it('records what each attempt came to as fields, and its words apart', async () => {
    expect(await outcomeOf(receiver.urlOf('/fine'))).toMatchObject({
      status: 'delivered',
      last_outcome: { type: 'delivered' },
      last_error: null,
    });
    receiver.script({ status: 503, body: 'down for a moment' });
    expect(await outcomeOf(receiver.urlOf('/flaky'))).toMatchObject({
      status: 'retrying',
      last_outcome: { type: 'failed', kind: 'http', status: 503 },
      last_error: expect.stringMatching(/answered 503 \(down for a moment\)$/),
    });
    const answeredAt = Date.now();
    receiver.script({ status: 429, body: 'slow down', headers: { 'retry-after': '120' } });
    const limited = await outcomeOf(receiver.urlOf('/limited'));
    expect(limited?.last_outcome).toMatchObject({
      type: 'failed',
      kind: 'rate_limited',
      status: 429,
    });
    expect(Date.parse(limited?.last_outcome.until)).toBeGreaterThanOrEqual(answeredAt + 120_000);
    expect(await outcomeOf(`http://127.0.0.1:${closedPort}/gone`)).toMatchObject({
      status: 'retrying',
      last_outcome: { type: 'failed', kind: 'network', code: 'ECONNREFUSED' },
    });
    receiver.script({ status: 404, body: 'no such hook' });
    expect(await outcomeOf(receiver.urlOf('/missing'))).toMatchObject({
      status: 'failed_permanent',
      last_outcome: { type: 'failed', kind: 'http', status: 404 },
      last_error: expect.stringMatching(/^permanent: /),
    });
  });

  it('a private target refused by policy is a typed refusal, and the outstanding list carries it', async () => {
    const refusing = testDeliveries({
      pool,
      email,
      emailEndpoint: smtp.url,
      timeScale: 0.01,
      webhookAllowedNetworks: [],
      logger: createLogger('silent', 'test'),
    })('strict');
    const event = await breachUnder({ in_app: false, webhooks: [{ url: receiver.urlOf('/x') }] });
    await refusing.deliver({ type: 'breach', payload: event }, { batchId: 99n, eventId: 99n });
    const outstanding = await deliveryListOutstanding(pool, 100);
    expect(outstanding.find((d) => d.alert_id === event.breach_id)).toMatchObject({
      state: 'failed_permanent',
      last_outcome: { type: 'failed', kind: 'refused' },
    });
  });
});
