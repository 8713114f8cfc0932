import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The code a paging SMS asks to be replied with (`ACK 482913`): six digits keyed on the
 * ledger row of that SMS with the acknowledge-link key (STEGA_ACK_SECRET, else the
 * database's `ack_link` secret), under a prefix of its own. The reply is believed only from
 * the number the SMS went to (http/routes/twilio.ts); the code makes a forged sender number
 * not enough as well: it cannot be derived from the row's id, which counts up.
 */
const VERSION = 'stega-sms-ack-v1';

/** The code of the SMS recorded as ledger row `deliveryId`. */
export function smsAckCode(secret: string, deliveryId: number): string {
  const mac = createHmac('sha256', secret).update(`${VERSION}:${deliveryId}`).digest();
  return String(mac.readUInt32BE(0) % 1_000_000).padStart(6, '0');
}

/** Of `deliveryIds` (the SMS pages sent to the replying number's person), the one `code` names. */
export function smsAckCodeMatch(
  secret: string,
  code: string,
  deliveryIds: readonly number[],
): number | undefined {
  const given = Buffer.from(code);
  for (const id of deliveryIds) {
    const expected = Buffer.from(smsAckCode(secret, id));
    if (expected.length === given.length && timingSafeEqual(expected, given)) return id;
  }
  return undefined;
}
