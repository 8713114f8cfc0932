import { mootReason } from './moot.js';
import type { LedgerDb } from './rows.js';

/** One held row a digest carries (the claimed row's own among them, first). */
export interface HeldRow {
  id: number;
  alert_type: string;
  ticket_id: number;
  payload: unknown;
  created_at: Date;
}

/** What a held row's send carries: its person's zone and every held row of the digest. */
export interface Gathered {
  /** The person's zone (their own, else their first team's), null: the instance's. */
  zone: string | null;
  /** Held until: the end of the quiet hours the digest closes. */
  heldUntil: Date;
  /** The rows the message lists, oldest first; the claimed row among them. */
  rows: HeldRow[];
  /** The other rows, now claimed with the claimed row's token: its outcome is theirs. */
  followers: number[];
}

/**
 * Gathers the digest of a claimed held row (one statement, autocommit): the same person's
 * other held rows of the same method and address, held until no later than it and still
 * `scheduled`, that are not moot (as deliveryClaimDue judges a scheduled row: the ticket
 * resolved or closed, the breach acknowledged, the SLA cycle's clock stopped), and those
 * an earlier attempt of this row gathered already (`digest_of` it, not yet final). They are
 * claimed with the row's token, with no next attempt and no claimant session of their own:
 * never claimed alone, they follow this row's outcome (deliveryOutcomesRecord). Moot held
 * rows are left `scheduled` for fallbackCancelMoot, which cancels them saying why. Locked
 * rows are skipped (another worker has them).
 */
export async function digestGather(
  db: LedgerDb,
  row: { id: number; claim_token: string },
): Promise<Gathered | null> {
  const { rows } = await db.query({
    name: 'delivery_digest_gather',
    text: `with leader as (
       select l.* from stega.alert_deliveries l
        where l.id = $1 and l.claim_token = $2::uuid and l.held_until is not null
     ),
     taken as (
       update stega.alert_deliveries d
          set status = 'sending', claim_token = $2::uuid, attempts = d.attempts + 1,
              last_attempt_at = now(), next_attempt_at = null, claim_pid = null,
              claim_backend_start = null, digest_of = $1, updated_at = now()
        where d.id in (
          select c.id from stega.alert_deliveries c, leader l
           where c.id <> l.id and c.page_agent_id = l.page_agent_id
             and c.channel = l.channel and c.recipient = l.recipient
             and c.held_until is not null
             and ((c.digest_of = l.id and c.status in ('sending', 'retrying'))
                  or (c.status = 'scheduled' and c.held_until <= l.held_until
                      and ${mootReason('c')} is null))
           for update of c skip locked)
       returning d.id, d.alert_type, d.ticket_id, d.payload, d.created_at
     )
     select l.held_until,
            (select coalesce(a.time_zone,
                      (select tm.time_zone from stega.team_members m
                         join stega.teams tm on tm.id = m.team_id
                        where m.agent_id = a.id and tm.time_zone is not null
                        order by tm.id limit 1))
               from stega.agents a where a.id = l.page_agent_id) as zone,
            jsonb_build_object('id', l.id, 'alert_type', l.alert_type, 'ticket_id', l.ticket_id,
                               'payload', l.payload, 'created_at', l.created_at) as own,
            (select coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'alert_type', t.alert_type,
                               'ticket_id', t.ticket_id, 'payload', t.payload,
                               'created_at', t.created_at)), '[]') from taken t) as others
       from leader l`,
    values: [row.id, row.claim_token],
  });
  const found = rows[0];
  if (!found) return null;
  type Raw = {
    id: number;
    alert_type: string;
    ticket_id: number;
    payload: unknown;
    created_at: string;
  };
  const held = (raw: Raw): HeldRow => ({
    id: Number(raw.id),
    alert_type: raw.alert_type,
    ticket_id: Number(raw.ticket_id),
    payload: raw.payload,
    created_at: new Date(raw.created_at),
  });
  const others = (found.others as Raw[]).map(held);
  const all = [held(found.own as Raw), ...others].sort(
    (a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id - b.id,
  );
  return {
    zone: (found.zone as string | null) ?? null,
    heldUntil: found.held_until as Date,
    rows: all,
    followers: others.map((r) => r.id),
  };
}
