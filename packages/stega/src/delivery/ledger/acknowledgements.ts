import type { Queryable } from '@stega/pgque';

/**
 * Acknowledgements recorded (by the database's clock, which stamps the rows) for `address`
 * (lower-case) in the last `seconds`, and for tickets of mailbox `mailboxId` in the last hour.
 */
export async function acknowledgementCounts(
  db: Queryable,
  address: string,
  seconds: number,
  mailboxId: number,
  /** The mailbox's cap: counting stops there, so a busy mailbox costs no more than it. */
  mailboxCap: number,
): Promise<{ recipient: number; mailbox: number }> {
  const { rows } = await db.query(
    `select (select count(*) from stega.alert_deliveries
              where alert_type = 'acknowledgement' and recipient = $1
                and created_at > now() - make_interval(secs => $2::double precision))::int
              as recipient,
            (select count(*) from (
               select 1 from stega.alert_deliveries d
                 join stega.tickets t on t.id = d.ticket_id
                where d.alert_type = 'acknowledgement' and t.mailbox_id = $3
                  and d.created_at > now() - interval '1 hour'
                limit $4) capped)::int
              as mailbox`,
    [address, seconds, mailboxId, mailboxCap],
  );
  return { recipient: Number(rows[0]?.recipient ?? 0), mailbox: Number(rows[0]?.mailbox ?? 0) };
}

/**
 * Serializes the acknowledgements to `address` until the caller's transaction ends, so that
 * two messages of one sender filed at once cannot both find none sent recently. Take it
 * before acknowledgementCounts (a statement of its own: the count must see what the
 * holder before committed).
 */
export async function acknowledgementLock(db: Queryable, address: string): Promise<void> {
  await db.query(
    `select pg_advisory_xact_lock(hashtextextended('stega.acknowledgement:' || $1, 0))`,
    [address],
  );
}
