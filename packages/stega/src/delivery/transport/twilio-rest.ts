import type { CallOutcome } from '../../domain/delivery-outcome.js';
import { failed } from '../../domain/delivery-outcome.js';
import { postJson } from './http-post.js';

/** The Twilio account a worker sends through (config.twilio). */
export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  /** E.164 number messages and calls come from. */
  fromNumber: string;
  /** The REST API's base URL, no trailing slash. */
  apiUrl: string;
}

/** The circuit key of every Twilio call: one provider, one circuit. */
export const TWILIO_ENDPOINT = 'twilio';

/**
 * Creates one resource of Twilio's 2010-04-01 REST API (`Messages`, `Calls`): a form-encoded
 * POST with Basic auth (account SID, auth token), through the wing's HTTP transport so the
 * outcome is typed like every channel's (2xx delivered; 4xx other than 408/409/425/429 for
 * good; 429 and 5xx retried, Retry-After honoured; time-outs and network failures retried).
 * Without an account configured the delivery fails for good, and the paged person's next
 * step goes at once.
 */
export function twilioCreate(
  twilio: TwilioSettings | undefined,
  resource: 'Messages' | 'Calls',
  params: Record<string, string>,
  call: { signal: AbortSignal; timeoutMs: number; allowedNetworks: readonly string[] },
): Promise<CallOutcome> {
  if (!twilio) {
    return Promise.resolve(
      failed({ kind: 'permanent', text: 'Twilio is not configured (TWILIO_ACCOUNT_SID …)' }),
    );
  }
  const auth = Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64');
  return postJson({
    url: `${twilio.apiUrl}/2010-04-01/Accounts/${twilio.accountSid}/${resource}.json`,
    what: `Twilio ${resource}`,
    body: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${auth}`,
      accept: 'application/json',
    },
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    allowedNetworks: call.allowedNetworks,
    redact: (text) => text.split(twilio.authToken).join('…'),
  });
}
