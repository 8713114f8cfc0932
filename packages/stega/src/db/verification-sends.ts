import type { Queryable } from '@stega/pgque';

/** A verification message sent for a method of `agentId` to `address`, at `sentAt`. */
export interface VerificationSend {
  agentId: number;
  address: string;
  sentAt: Date;
}

/**
 * The verification sends since `since` of agent `agentId` or to `address`, oldest first, with
 * the table held against other writers of it until the caller's transaction ends (sends are
 * rare: a person adding or re-sending a method), so a count and the insert that follows it
 * cannot race another request's. Rows older than a day go first.
 */
export async function verificationSendsLockedSince(
  tx: Queryable,
  agentId: number,
  address: string,
  since: Date,
): Promise<VerificationSend[]> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('stega.verification_sends'))`);
  await tx.query(
    `delete from stega.verification_sends where sent_at < $1::timestamptz - interval '1 day'`,
    [since],
  );
  const { rows } = await tx.query(
    `select agent_id, address, sent_at from stega.verification_sends
      where (agent_id = $1 or address = $2) and sent_at > $3
      order by sent_at`,
    [agentId, address, since],
  );
  return rows.map((r) => ({
    agentId: Number(r.agent_id),
    address: String(r.address),
    sentAt: r.sent_at as Date,
  }));
}

export async function verificationSendInsert(
  tx: Queryable,
  send: VerificationSend & { method: string },
): Promise<void> {
  await tx.query(
    `insert into stega.verification_sends (agent_id, method, address, sent_at)
     values ($1, $2, $3, $4)`,
    [send.agentId, send.method, send.address, send.sentAt],
  );
}
