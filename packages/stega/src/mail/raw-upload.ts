import { createHash, randomUUID } from 'node:crypto';
import type { Queryable } from '@stega/pgque';
import { inboundChunkDeleteUnclaimed, inboundChunkInsert } from '../db/inbound-mail.js';
import { senderOf } from './conversation-key.js';
import { HEADER_SCAN_LIMIT, headerEnd, messageIdOf } from './message-key.js';
import { collectYoungGarbage } from './young-garbage.js';

/** The size of one stored chunk of a message's source. */
export const RAW_CHUNK_BYTES = 1024 * 1024;

/** A message's source once written whole. */
export interface StoredSource {
  uploadId: string;
  sha256: string;
  size: number;
  /** The Message-ID read from its header block (without `<>`), if any. */
  messageId: string | undefined;
  /** The From header's first address, if any (its conversation: conversation-key.ts). */
  from: string | undefined;
}

/** Thrown by `write` past `maxBytes`; the chunks written so far are removed by `abort`. */
export class SourceTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the message is larger than ${maxBytes} bytes`);
    this.name = 'SourceTooLargeError';
  }
}

/**
 * Writes a message's source into the database as it arrives: chunks of RAW_CHUNK_BYTES, each
 * committed on its own (no transaction is held open while a sender takes its time), hashed
 * on the way and the header block scanned for the Message-ID and the sender. Memory holds
 * one chunk, never the whole message: the bytes received are copied into one buffer of
 * RAW_CHUNK_BYTES, reused for every chunk (the driver has copied it into its message by
 * the time an insert resolves), so a large message leaves no chunk-sized garbage behind
 * but the driver's own copy. The chunks are nobody's until a receipt names the upload
 * (intake.ts); orphans are removed by the janitor.
 */
export class RawUpload {
  readonly uploadId = randomUUID();
  private readonly hash = createHash('sha256');
  /** The chunk being filled (allocated at the first byte, so an empty upload costs nothing). */
  private chunk: Buffer | undefined;
  private filled = 0;
  private seq = 0;
  private size = 0;
  private head: Buffer[] | null = [];
  private headBytes = 0;
  private messageId: string | undefined;
  private from: string | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly maxBytes: number,
  ) {}

  /** Adds bytes; writes a chunk whenever one is full. @throws SourceTooLargeError */
  async write(bytes: Buffer): Promise<void> {
    this.size += bytes.length;
    if (this.size > this.maxBytes) throw new SourceTooLargeError(this.maxBytes);
    this.hash.update(bytes);
    this.scanHead(bytes);
    let at = 0;
    while (at < bytes.length) {
      this.chunk ??= Buffer.allocUnsafeSlow(RAW_CHUNK_BYTES);
      const copied = bytes.copy(this.chunk, this.filled, at);
      this.filled += copied;
      at += copied;
      if (this.filled === RAW_CHUNK_BYTES) {
        await this.flush();
        // only a message larger than a chunk gets here: its transient buffers go now
        collectYoungGarbage();
      }
    }
  }

  /** Writes the last chunk; what was stored. */
  async finish(): Promise<StoredSource> {
    if (this.filled > 0 || this.seq === 0) await this.flush();
    this.chunk = undefined;
    if (this.head) this.readHeaders(Buffer.concat(this.head), true);
    return {
      uploadId: this.uploadId,
      sha256: this.hash.digest('hex'),
      size: this.size,
      messageId: this.messageId,
      from: this.from,
    };
  }

  /** Removes what was written (a refused or broken transfer). */
  async abort(): Promise<void> {
    this.chunk = undefined;
    this.filled = 0;
    await inboundChunkDeleteUnclaimed(this.db, this.uploadId);
  }

  private async flush(): Promise<void> {
    const data = this.chunk ? this.chunk.subarray(0, this.filled) : Buffer.alloc(0);
    await inboundChunkInsert(this.db, this.uploadId, this.seq++, data);
    this.filled = 0;
  }

  private scanHead(bytes: Buffer): void {
    if (!this.head) return;
    this.head.push(bytes);
    this.headBytes += bytes.length;
    const head = Buffer.concat(this.head);
    this.head = [head];
    if (this.readHeaders(head, false)) this.head = null;
    else if (this.headBytes > HEADER_SCAN_LIMIT) this.head = null;
  }

  /** Reads the Message-ID and the sender once the header block is complete (or the source ended). */
  private readHeaders(head: Buffer, ended: boolean): boolean {
    const end = headerEnd(head);
    if (end === undefined && !ended) return false;
    const block = head.subarray(0, end ?? head.length).toString('latin1');
    this.messageId = messageIdOf(block);
    this.from = senderOf(block);
    return true;
  }
}
