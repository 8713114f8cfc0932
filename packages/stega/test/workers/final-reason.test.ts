import { describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '../../src/delivery/ledger/rows.js';
import { settle } from '../../src/delivery/settle.js';
import { failed } from '../../src/domain/delivery-outcome.js';

const NOW = Date.parse('2026-03-02T10:00:00Z');

const row = (giveUpAt: Date | null, attempts = 3): ClaimedDelivery => ({
  id: 1,
  alert_type: 'breach',
  alert_id: 1,
  ticket_id: 1,
  channel: 'webhook',
  recipient: 'https://hooks.example.test/x',
  fallback: false,
  endpoint: 'https://hooks.example.test/x',
  attempts,
  give_up_at: giveUpAt,
  retry_delays: [60],
  payload: {},
  secret: null,
  claim_token: '00000000-0000-0000-0000-000000000001',
  probe: false,
});

/**
 * Issue 24: a delivery that fails for good says why in its ticket's activity (`reason`):
 * `rejected` when no retry can succeed, `gave_up` when the next try would pass the horizon.
 */
describe('why a delivery failed for good', () => {
  const options = { timeScale: 1, now: NOW, jitter: 0.5 };

  it('a permanent failure is rejected, whatever the horizon', () => {
    const { entry } = settle(
      row(new Date(NOW + 3_600_000)),
      failed({ kind: 'http', status: 404, text: 'answered 404' }),
      options,
    );
    expect(entry).toMatchObject({ status: 'failed_permanent', final_reason: 'rejected' });
  });

  it('a transient failure past the retry horizon gave up', () => {
    const { entry } = settle(
      row(new Date(NOW + 10_000), 7),
      failed({ kind: 'http', status: 503, text: 'answered 503' }),
      options,
    );
    expect(entry).toMatchObject({ status: 'failed_permanent', final_reason: 'gave_up' });
  });

  it('a transient failure within the horizon is retried and has no final reason', () => {
    const { entry } = settle(
      row(new Date(NOW + 3_600_000)),
      failed({ kind: 'network', code: 'ECONNREFUSED', text: 'refused' }),
      options,
    );
    expect(entry).toMatchObject({ status: 'retrying', final_reason: null });
  });
});
