/**
 * Text that people wrote (a ticket's subject, a requester's or an agent's name) as an alert
 * shows it: always one line, in every channel. A subject with line breaks must not add lines
 * of its own to a message (a fake "Acknowledge …: https://…" line above the real one in an
 * email, a second header line, a list item in a card), so every control character (C0, DEL,
 * C1, the Unicode line and paragraph separators) becomes a space. Bidirectional overrides and
 * isolates are dropped: they let a subject show its characters in another order than they
 * are (a link that reads backwards). What each channel escapes beyond this (Slack's `&<>`,
 * a card's Markdown) is the channel's own (channels/).
 */

// \p{Cc}: C0, DEL and C1
const CONTROLS = /\s*[\p{Cc}\u2028\u2029]+\s*/gu;
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` on one line: controls become one space, bidirectional controls go, ends trimmed. */
export function oneLine(text: string): string {
  return text.replace(BIDI_CONTROLS, '').replace(CONTROLS, ' ').trim();
}

/** A person as an alert names them: `Ana <ana@example.test> (Acme)`, on one line. */
export function personLine(person: { name: string; email: string; org?: string | null }): string {
  const org = person.org ? ` (${person.org})` : '';
  return oneLine(`${person.name} <${person.email}>${org}`);
}
