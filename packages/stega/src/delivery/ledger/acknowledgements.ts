import type { Queryable } from '@stega/pgque';

/**
 * Acknowledgements recorded for `address` (lower-case) in the last `seconds` (by the
 * database's clock, which stamps the rows).
 */
export async function acknowledgementCountWithin(
  db: Queryable,
  address: string,
  seconds: number,
): Promise<number> {
  const { rows } = await db.query(
    `select count(*)::int as n from stega.alert_deliveries
      where alert_type = 'acknowledgement' and recipient = $1
        and created_at > now() - make_interval(secs => $2::double precision)`,
    [address, seconds],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Serializes the acknowledgements to `address` until the caller's transaction ends, so that
 * two messages of one sender filed at once cannot both find none sent recently. Take it
 * before acknowledgementCountWithin (a statement of its own: the count must see what the
 * holder before committed).
 */
export async function acknowledgementLock(db: Queryable, address: string): Promise<void> {
  await db.query(
    `select pg_advisory_xact_lock(hashtextextended('stega.acknowledgement:' || $1, 0))`,
    [address],
  );
}
