import type { LedgerDb } from './rows.js';

/**
 * The open circuits whose probe is due, each moved on by `probeSeconds` (so replicas do not
 * probe together): their endpoints may let one delivery through now (deliveryClaimProbes).
 * One autocommit statement.
 */
export async function endpointProbesDue(db: LedgerDb, probeSeconds: number): Promise<string[]> {
  const { rows } = await db.query({
    name: 'delivery_endpoint_probes_due',
    text: `update stega.delivery_endpoints
        set probe_at = now() + make_interval(secs => $1::double precision), updated_at = now()
      where state = 'open' and probe_at <= now()
      returning endpoint`,
    values: [probeSeconds],
  });
  return rows.map((row) => String(row.endpoint));
}
