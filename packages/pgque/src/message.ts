import { asBigInt, asDate, asNumberOrNull, asStringOrNull } from './row-values.js';

/**
 * One event of a batch, as returned by `receive` and `receiveCoop` (the engine's
 * `pgque.message`). The payload is the raw stored text; the high-level consumers parse it.
 */
export interface Message {
  msgId: bigint;
  batchId: bigint;
  type: string;
  payload: string | null;
  /** How many times the event was retried before this delivery; null on the first one. */
  retryCount: number | null;
  /** When the event was first sent (kept across retries). */
  createdAt: Date;
  extra1: string | null;
  extra2: string | null;
  extra3: string | null;
  extra4: string | null;
}

/** The columns of `pgque.message`, in its field order. */
export const MESSAGE_COLUMNS =
  'msg_id, batch_id, type, payload, retry_count, created_at, extra1, extra2, extra3, extra4';

export function messageFromRow(row: Record<string, unknown>): Message {
  return {
    msgId: asBigInt(row.msg_id),
    batchId: asBigInt(row.batch_id),
    type: String(row.type),
    payload: asStringOrNull(row.payload),
    retryCount: asNumberOrNull(row.retry_count),
    createdAt: asDate(row.created_at),
    extra1: asStringOrNull(row.extra1),
    extra2: asStringOrNull(row.extra2),
    extra3: asStringOrNull(row.extra3),
    extra4: asStringOrNull(row.extra4),
  };
}
