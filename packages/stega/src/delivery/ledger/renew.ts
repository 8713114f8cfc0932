import type { LedgerDb } from './rows.js';

/**
 * Renews the leases of claims a live worker holds (its heartbeat): each row still claimed by
 * that token, and whose lease has not lapsed, is leased for `leaseSeconds` more. A lapsed
 * lease is not revived (another worker may be claiming the row); a row taken over has
 * another token. Returns the ids renewed. One autocommit statement.
 */
export async function deliveryLeaseRenew(
  db: LedgerDb,
  claims: { id: number; token: string }[],
  leaseSeconds: number,
): Promise<number[]> {
  if (claims.length === 0) return [];
  const { rows } = await db.query({
    name: 'delivery_lease_renew',
    text: `update stega.alert_deliveries d
        set next_attempt_at = now() + make_interval(secs => $3::double precision)
       from unnest($1::bigint[], $2::uuid[]) as c (id, token)
      where d.id = c.id and d.claim_token = c.token and d.status = 'sending'
        and d.next_attempt_at > now()
      returning d.id`,
    values: [claims.map((c) => c.id), claims.map((c) => c.token), leaseSeconds],
  });
  return rows.map((row) => Number(row.id));
}
