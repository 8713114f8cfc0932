import type { Queryable } from '@stega/pgque';

/** Alert deliveries one replica (`delivered_by`) made in one time bucket. */
export interface DeliveryBucketRow {
  bucket_start: Date;
  delivered_by: string;
  deliveries: number;
}

/**
 * Delivered alerts per replica in buckets of `bucketSeconds`, for deliveries made in
 * `[from, to)`; buckets without deliveries are absent.
 */
export async function deliveryCountByReplica(
  db: Queryable,
  from: Date,
  to: Date,
  bucketSeconds: number,
): Promise<DeliveryBucketRow[]> {
  const { rows } = await db.query(
    `select to_timestamp(floor(extract(epoch from delivered_at) / $3) * $3) as bucket_start,
            delivered_by, count(*) as deliveries
       from stega.alert_deliveries
      where status = 'delivered' and delivered_by is not null
        and delivered_at >= $1 and delivered_at < $2
      group by 1, 2
      order by 1, 2`,
    [from, to, bucketSeconds],
  );
  return rows.map((row) => ({
    bucket_start: row.bucket_start as Date,
    delivered_by: String(row.delivered_by),
    deliveries: Number(row.deliveries),
  }));
}
