/**
 * Loops and noise (RFC 3834 and the headers in common use): why a message is an automatic
 * one that must never open a ticket or be answered, or undefined for a person's mail.
 */
export function autoReplyReason(header: (name: string) => string | undefined): string | undefined {
  const autoSubmitted = header('auto-submitted')?.trim().toLowerCase();
  if (autoSubmitted && autoSubmitted !== 'no') return `Auto-Submitted: ${autoSubmitted}`;
  if (header('x-autoreply') !== undefined) return 'X-Autoreply';
  if (header('x-autorespond') !== undefined) return 'X-Autorespond';
  const precedence = header('precedence')?.trim().toLowerCase();
  if (precedence === 'bulk' || precedence === 'junk' || precedence === 'list') {
    return `Precedence: ${precedence}`;
  }
  return undefined;
}
