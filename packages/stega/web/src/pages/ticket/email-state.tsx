import { useState } from 'react';
import { ApiError, api } from '../../api.js';
import { formatDateTime } from '../../format.js';
import type { TicketDetail } from '../../types.js';

export type CustomerEmail = NonNullable<TicketDetail['comments'][number]['email']>;

/** Who an email went to, in words: `rui@customer.test (cc ana@customer.test)`. */
function recipients(email: CustomerEmail): string {
  return email.cc.length > 0
    ? `${email.to.join(', ')} (cc ${email.cc.join(', ')})`
    : email.to.join(', ');
}

/** A ledger reason without the retry loop's own prefixes (`permanent: `, `gave up …: `). */
function reasonOf(email: CustomerEmail): string {
  return (email.last_error ?? 'no reason recorded').replace(/^permanent: /, '');
}

/**
 * Where an email to the customer is, as a sentence: being sent, sent (and when), not sent
 * yet (why, and when it is tried again), or not delivered (why), with a button to send a
 * failed one again.
 */
export function EmailState({
  ticketId,
  email,
  onChanged,
}: {
  ticketId: number;
  email: CustomerEmail;
  onChanged: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>();
  const retry = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      await api('POST', `/api/tickets/${ticketId}/emails/${email.id}/retry`);
      onChanged();
    } catch (error) {
      setProblem(error instanceof ApiError ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  const what = email.kind === 'acknowledgement' ? '“We got your request” email' : 'Reply';
  let sentence: string;
  let tone: 'ok' | 'waiting' | 'failed';
  switch (email.state) {
    case 'delivered':
      tone = 'ok';
      sentence = `${what} ${email.kind === 'acknowledgement' ? 'sent' : 'emailed'} to ${recipients(email)} · ${formatDateTime(email.sent_at)}`;
      if (email.last_error) sentence += ` · ${email.last_error}`;
      break;
    case 'retrying':
      tone = 'waiting';
      sentence = `${what} not sent yet to ${recipients(email)}: ${reasonOf(email)}. Trying again ${
        email.next_attempt_at ? `at ${formatDateTime(email.next_attempt_at)}` : 'soon'
      } (${email.attempts} ${email.attempts === 1 ? 'attempt' : 'attempts'} so far).`;
      break;
    case 'failed_permanent':
    case 'cancelled':
      tone = 'failed';
      sentence = `${what} not delivered to ${recipients(email)}: ${reasonOf(email)}`;
      break;
    default:
      tone = 'waiting';
      sentence = `${what}: sending to ${recipients(email)}…`;
  }
  return (
    <p className={`small email-state email-${tone}`} data-email-state={email.state}>
      {sentence}
      {tone === 'failed' ? (
        <>
          {' '}
          <button type="button" className="secondary small" disabled={busy} onClick={retry}>
            Send again
          </button>
        </>
      ) : null}
      {problem ? <span role="alert"> {problem}</span> : null}
    </p>
  );
}
