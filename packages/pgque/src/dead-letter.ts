import { asBigInt, asBigIntOrNull, asDate, asNumberOrNull, asStringOrNull } from './row-values.js';

/** A dead-lettered event (`pgque.dead_letter`, via `dlq_inspect`). */
export interface DeadLetter {
  id: bigint;
  queueId: number;
  consumerId: number;
  deadAt: Date;
  reason: string | null;
  eventId: bigint;
  eventTime: Date;
  txid: bigint | null;
  retryCount: number | null;
  type: string | null;
  payload: string | null;
  extra1: string | null;
  extra2: string | null;
  extra3: string | null;
  extra4: string | null;
}

export const DEAD_LETTER_COLUMNS =
  'dl_id, dl_queue_id, dl_consumer_id, dl_time, dl_reason, ev_id, ev_time, ev_txid::text as ev_txid, ev_retry, ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4';

export function deadLetterFromRow(row: Record<string, unknown>): DeadLetter {
  return {
    id: asBigInt(row.dl_id),
    queueId: Number(row.dl_queue_id),
    consumerId: Number(row.dl_consumer_id),
    deadAt: asDate(row.dl_time),
    reason: asStringOrNull(row.dl_reason),
    eventId: asBigInt(row.ev_id),
    eventTime: asDate(row.ev_time),
    txid: asBigIntOrNull(row.ev_txid),
    retryCount: asNumberOrNull(row.ev_retry),
    type: asStringOrNull(row.ev_type),
    payload: asStringOrNull(row.ev_data),
    extra1: asStringOrNull(row.ev_extra1),
    extra2: asStringOrNull(row.ev_extra2),
    extra3: asStringOrNull(row.ev_extra3),
    extra4: asStringOrNull(row.ev_extra4),
  };
}
