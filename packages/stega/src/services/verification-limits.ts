import { inTransaction } from '../db/pool.js';
import { verificationSendInsert, verificationSendsLockedSince } from '../db/verification-sends.js';
import type { ServiceContext } from './context.js';
import { TooManyCodesError } from './errors.js';

/**
 * How many verification messages may go out in an hour (config.verificationLimits): for one
 * agent's contact methods, and to one address (a number, an email address, a push endpoint, a
 * Slack user) whoever adds it. 0: no limit.
 */
export interface VerificationLimits {
  perAgentHour: number;
  perAddressHour: number;
}

const HOUR_MS = 3_600_000;

/**
 * Counts one verification message of `method` (agent `agentId`'s, to `address`) against the
 * limits, committed before it is sent; refuses it with TooManyCodesError (429, Retry-After
 * when the oldest counted send leaves the hour) when either count is full. A send refused
 * is not counted; a send allowed counts even if the call then fails (it may have arrived).
 */
export async function verificationSendReserve(
  ctx: ServiceContext,
  limits: VerificationLimits,
  method: { agent_id: number; method: string; address: string },
): Promise<void> {
  if (limits.perAgentHour === 0 && limits.perAddressHour === 0) return;
  const now = ctx.now();
  // one address however it is spelt (an email address's case)
  const address = method.address.toLowerCase();
  await inTransaction(ctx.pool, async (tx) => {
    const since = new Date(now.getTime() - HOUR_MS);
    const sends = await verificationSendsLockedSince(tx, method.agent_id, address, since);
    const refusal =
      refusalOf(
        sends.filter((s) => s.agentId === method.agent_id),
        limits.perAgentHour,
        'agent',
        now,
      ) ??
      refusalOf(
        sends.filter((s) => s.address === address),
        limits.perAddressHour,
        'address',
        now,
      );
    if (refusal) throw refusal;
    await verificationSendInsert(tx, {
      agentId: method.agent_id,
      method: method.method,
      address,
      sentAt: now,
    });
  });
}

/** The refusal when `sends` (oldest first, within the hour) fill `limit`; else undefined. */
function refusalOf(
  sends: { sentAt: Date }[],
  limit: number,
  whose: 'agent' | 'address',
  now: Date,
): TooManyCodesError | undefined {
  if (limit === 0 || sends.length < limit) return undefined;
  // the send whose leaving the hour brings the count under the limit
  const freeing = sends[sends.length - limit] as { sentAt: Date };
  const seconds = Math.max(
    1,
    Math.ceil((freeing.sentAt.getTime() + HOUR_MS - now.getTime()) / 1000),
  );
  return new TooManyCodesError(seconds, whose, limit);
}
