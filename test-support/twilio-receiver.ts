import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import twilio from 'twilio';

/**
 * A local stand-in for Twilio's REST API (2010-04-01), on 127.0.0.1: it takes
 * `POST /2010-04-01/Accounts/{sid}/Messages.json` and `…/Calls.json` form-encoded with Basic
 * auth (the account SID and auth token; anything else is 401, as Twilio answers), answers 201
 * with the resource (`sid`, `status: queued`), and then reports the message's or call's
 * progress to its `StatusCallback` the way Twilio does: form-encoded, signed with
 * `X-Twilio-Signature` (the `twilio` package's getExpectedTwilioSignature). It also plays the
 * person: `reply` texts the Twilio number (to the app's incoming-SMS webhook, signed), and
 * `press` answers a call's `<Gather>` with a key. `down` makes every API call answer 503.
 */

export interface TwilioResource {
  kind: 'Messages' | 'Calls';
  sid: string;
  to: string;
  from: string;
  /** The SMS text, or the call's TwiML. */
  body: string;
  statusCallback: string | null;
  /** When the request arrived (Date.now()). */
  at: number;
}

export interface TwilioApiCall {
  path: string;
  status: number;
  at: number;
}

export async function startTwilioReceiver(options: {
  accountSid: string;
  authToken: string;
  /** Progress reported to each StatusCallback, in order (default queued, sent, delivered). */
  progress?: string[];
}) {
  const { accountSid, authToken } = options;
  const progress = options.progress ?? ['queued', 'sent', 'delivered'];
  const calls: TwilioApiCall[] = [];
  const created: TwilioResource[] = [];
  /** Status callbacks sent, with the app's answer. */
  const callbacks: { url: string; params: Record<string, string>; answered: number }[] = [];
  let down: number | null = null;
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;

  const post = async (url: string, params: Record<string, string>, signature?: string) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature':
          signature ?? twilio.getExpectedTwilioSignature(authToken, url, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    return { status: response.status, text: await response.text() };
  };

  const report = async (resource: TwilioResource) => {
    if (!resource.statusCallback) return;
    for (const status of progress) {
      const params: Record<string, string> =
        resource.kind === 'Messages'
          ? {
              AccountSid: accountSid,
              MessageSid: resource.sid,
              MessageStatus: status,
              To: resource.to,
              From: resource.from,
            }
          : {
              AccountSid: accountSid,
              CallSid: resource.sid,
              CallStatus: status,
              To: resource.to,
              Called: resource.to,
              From: resource.from,
            };
      const answer = await post(resource.statusCallback, params).catch(() => ({
        status: 0,
        text: '',
      }));
      callbacks.push({ url: resource.statusCallback, params, answered: answer.status });
      wake();
    }
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const path = request.url ?? '/';
      const answer = (status: number, body: unknown) => {
        calls.push({ path, status, at });
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
        wake();
      };
      const match = /^\/2010-04-01\/Accounts\/([^/]+)\/(Messages|Calls)\.json$/.exec(path);
      if (request.method !== 'POST' || !match)
        return answer(404, { code: 20404, message: 'not found' });
      if (request.headers.authorization !== expectedAuth || match[1] !== accountSid) {
        return answer(401, { code: 20003, message: 'Authenticate' });
      }
      if (down !== null) return answer(down, { code: 20500, message: 'Internal Server Error' });
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const kind = match[2] as 'Messages' | 'Calls';
      const body = kind === 'Messages' ? form.Body : form.Twiml;
      if (!/^\+[1-9]\d{6,14}$/.test(form.To ?? '') || !form.From || !body) {
        return answer(400, {
          code: 21211,
          message: "The 'To' number is not a valid phone number.",
        });
      }
      const resource: TwilioResource = {
        kind,
        sid: `${kind === 'Messages' ? 'SM' : 'CA'}${randomBytes(16).toString('hex')}`,
        to: form.To as string,
        from: form.From,
        body,
        statusCallback: form.StatusCallback ?? null,
        at,
      };
      created.push(resource);
      answer(201, { sid: resource.sid, status: 'queued', to: resource.to, from: resource.from });
      void report(resource);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    created,
    callbacks,
    messages: () => created.filter((r) => r.kind === 'Messages'),
    voiceCalls: () => created.filter((r) => r.kind === 'Calls'),
    /** Every API call answers `status` (503: Twilio unavailable) until `up()`. */
    down(status = 503) {
      down = status;
    },
    up() {
      down = null;
    },
    /** The person texts the Twilio number: POSTs the incoming-SMS webhook `url`, signed. */
    reply(url: string, from: string, to: string, body: string) {
      return post(url, {
        AccountSid: accountSid,
        MessageSid: `SM${randomBytes(16).toString('hex')}`,
        From: from,
        To: to,
        Body: body,
      });
    },
    /** The person presses `digits` during `call`: POSTs its `<Gather>` action, signed. */
    press(call: TwilioResource, digits: string) {
      const action = /action="([^"]+)"/.exec(call.body)?.[1]?.replace(/&amp;/g, '&');
      if (!action) throw new Error('the call’s TwiML has no <Gather action>');
      return post(action, {
        AccountSid: accountSid,
        CallSid: call.sid,
        Called: call.to,
        To: call.to,
        From: call.from,
        Digits: digits,
      });
    },
    /** A POST with the signature given (forged callbacks). */
    post,
    /** Resolves once `predicate` holds (checked after each API call and callback). */
    async until(predicate: () => boolean, timeoutMs = 60_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('the Twilio receiver did not see what was awaited in time');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 500));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type TwilioReceiver = Awaited<ReturnType<typeof startTwilioReceiver>>;
