import addressparser from 'nodemailer/lib/addressparser/index.js';

/**
 * The conversation a received message belongs to, for filing in order (issue 26): the
 * partition key its `mail.received` events are sent under, so that the mail of one
 * conversation is filed one message at a time, in the order it was received.
 *
 * The key is the sender's address, lower-cased: the From header's first address, else the
 * envelope sender (the filer reads the sender the same way). A customer's first message
 * and their reply to it share it whatever headers the reply carries, so the reply is filed
 * after the first message and finds its ticket. A thread-root key (the first Message-ID of
 * References, else the message's own) would split them whenever a client sends In-Reply-To
 * without References, or a reply to a reply names only its parent, and it would not
 * serialise what is kept per sender (the new-tickets-per-hour limit, the customer record).
 * What it leaves out: a reply from another person (a CC'd colleague) racing the first
 * message has a key of its own and may still open a second ticket; one sender's mail is
 * filed one at a time (a chatty sender waits on itself, and shares a slot with others).
 */
export function conversationKeyOf(sender: string | null | undefined): string | null {
  const key = sender?.trim().toLowerCase();
  return key ? key.slice(0, MAX_KEY_CHARS) : null;
}

/** Longer than any real address (RFC 5321 allows 254); the key of junk stays bounded. */
const MAX_KEY_CHARS = 320;

/** The first address with an `@` in a header block's From header; undefined without one. */
export function senderOf(headerBlock: string): string | undefined {
  const unfolded = headerBlock.replace(/\r?\n[ \t]+/g, ' ');
  const value = /^from[ \t]*:[ \t]*(.*)$/im.exec(unfolded)?.[1];
  if (!value) return undefined;
  const first = addressparser(value, { flatten: true }).find((a) => a.address.includes('@'));
  return first?.address;
}
