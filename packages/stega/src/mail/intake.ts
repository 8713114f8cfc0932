import type pg from 'pg';
import {
  type InboundSource,
  inboundChunkDeleteUnclaimed,
  inboundMailInsert,
} from '../db/inbound-mail.js';
import { inTransaction } from '../db/pool.js';
import { conversationKeyOf } from './conversation-key.js';
import { mailReceivedSendOnce } from './mail-queue.js';
import { RawUpload, type StoredSource } from './raw-upload.js';

/** How a message reached Stega, besides its source. */
export interface Arrival {
  source: InboundSource;
  /** The mailboxes it is for (one receipt each). */
  mailboxIds: number[];
  envelopeFrom: string | null;
  envelopeTo: string[];
  receivedAt: Date;
}

/**
 * A check run inside the intake's transaction before any receipt is written; it refuses the
 * message by throwing, which rolls the transaction back.
 */
export type IntakeGuard = (tx: pg.PoolClient) => Promise<void>;

/** What the intake did with a message: the receipts it made, and the mailboxes that had it already. */
export interface IntakeResult {
  inboundMailIds: number[];
  duplicates: number;
}

/**
 * The one intake of every path (SMTP, IMAP, webhook): in one transaction, a receipt per
 * mailbox for the stored source, unique on (mailbox, Message-ID or hash), and a
 * `mail.received` event for each new one. A mailbox that has the message already gets
 * nothing (an SMTP retry, an IMAP re-read, both paths): it is filed once. The receipt's
 * unique key is the durable guarantee; the event is sent idempotently under the same key
 * (`send_idem`), so the queue too carries one event per message and mailbox. The event's
 * partition key is the message's conversation (its sender), so the filer takes a
 * conversation's messages one at a time, in the order they arrived here. When every
 * mailbox had it, the stored chunks go. After this commits, nothing received is lost.
 * `guard`, when given, runs first in the same transaction and may refuse the message by
 * throwing (a webhook's used token): then nothing of it is written.
 */
export async function intakeCommit(
  pool: pg.Pool,
  stored: StoredSource,
  arrival: Arrival,
  guard?: IntakeGuard,
): Promise<IntakeResult> {
  const messageKey = stored.messageId ?? `sha256:${stored.sha256}`;
  const conversationKey = conversationKeyOf(stored.from ?? arrival.envelopeFrom);
  return inTransaction(pool, async (tx) => {
    if (guard) await guard(tx);
    const ids: number[] = [];
    for (const mailboxId of [...new Set(arrival.mailboxIds)]) {
      const id = await inboundMailInsert(tx, {
        mailbox_id: mailboxId,
        message_key: messageKey,
        message_id: stored.messageId ?? null,
        sha256: stored.sha256,
        size_bytes: stored.size,
        upload_id: stored.uploadId,
        source: arrival.source,
        envelope_from: arrival.envelopeFrom,
        envelope_to: arrival.envelopeTo,
        received_at: arrival.receivedAt,
      });
      if (id === undefined) continue;
      ids.push(id);
      await mailReceivedSendOnce(tx, {
        inboundMailId: id,
        conversationKey,
        mailboxId,
        messageKey,
      });
    }
    if (ids.length === 0) await inboundChunkDeleteUnclaimed(tx, stored.uploadId);
    return { inboundMailIds: ids, duplicates: arrival.mailboxIds.length - ids.length };
  });
}

/** Stores a source already in memory (IMAP, webhook) and takes it in (`guard`: see intakeCommit). */
export async function intakeBuffer(
  pool: pg.Pool,
  source: Buffer,
  arrival: Arrival,
  maxBytes: number,
  guard?: IntakeGuard,
): Promise<IntakeResult> {
  const upload = new RawUpload(pool, maxBytes);
  try {
    for (let at = 0; at < source.length; at += 256 * 1024) {
      await upload.write(source.subarray(at, at + 256 * 1024));
    }
    return await intakeCommit(pool, await upload.finish(), arrival, guard);
  } catch (error) {
    await upload.abort().catch(() => {});
    throw error;
  }
}
