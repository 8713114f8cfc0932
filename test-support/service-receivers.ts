import { createServer } from 'node:http';

/**
 * Real HTTP servers on 127.0.0.1 that answer the way Slack incoming webhooks, Teams workflow
 * webhooks and PagerDuty's Events API v2 document their answers (and one that takes anything), for adapter and end-to-end
 * tests (allow RECEIVER_NETWORKS from webhook-receiver.ts). Each records every request
 * (`calls`, with the parsed JSON) and what it accepted (`accepted`); `script(...)` queues
 * answers (status and body) for the next calls, before the service's own judgement.
 */

export interface ServiceCall {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: unknown;
  status: number;
  /** When the request arrived, before it was answered (Date.now()). */
  at: number;
}

interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

async function startServiceReceiver(judge: (json: unknown) => Answer) {
  const calls: ServiceCall[] = [];
  const accepted: ServiceCall[] = [];
  const scripted: Answer[] = [];
  let down: Answer | null = null;
  const waiters: (() => void)[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const answer = scripted.shift() ?? down ?? judge(json);
      const call = {
        path: request.url ?? '/',
        headers: request.headers,
        body,
        json,
        status: answer.status,
        at,
      };
      calls.push(call);
      if (answer.status >= 200 && answer.status < 300) accepted.push(call);
      response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      response.end(answer.body);
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    urlOf: (path: string) => `http://127.0.0.1:${port}${path}`,
    calls,
    accepted,
    /** The next answers, in order (then the service's own judgement again). */
    script(...answers: Answer[]) {
      scripted.push(...answers);
    },
    /** Every call answers this until `up()`. */
    down(answer: Answer) {
      down = answer;
    },
    up() {
      down = null;
    },
    /** Resolves once `predicate` holds over the calls (checked after each call). */
    async until(predicate: (calls: ServiceCall[]) => boolean, timeoutMs = 20_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(calls)) {
        if (Date.now() > deadline)
          throw new Error(`receiver: condition not met after ${calls.length} calls`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type ServiceReceiver = Awaited<ReturnType<typeof startServiceReceiver>>;

/** A generic webhook receiver: answers 204 to any request (scripted answers first). */
export function startAnyReceiver() {
  return startServiceReceiver(() => ({ status: 204, body: '' }));
}

/** Slack answers 200 `ok`; a body it cannot read as a message answers 400 `invalid_payload`. */
export function startSlackReceiver() {
  return startServiceReceiver((json) => {
    const message = json as { text?: unknown; blocks?: unknown } | undefined;
    if (!message || (typeof message.text !== 'string' && !Array.isArray(message.blocks))) {
      return { status: 400, body: 'invalid_payload' };
    }
    return { status: 200, body: 'ok' };
  });
}

/**
 * A Teams workflow answers 202 Accepted; a body that is not a message with attachments
 * answers 400 (the flow's trigger schema refuses it).
 */
export function startTeamsReceiver() {
  return startServiceReceiver((json) => {
    const message = json as { type?: unknown; attachments?: unknown } | undefined;
    if (message?.type !== 'message' || !Array.isArray(message.attachments)) {
      return { status: 400, body: '{"error":{"code":"InvalidRequestContent"}}' };
    }
    return { status: 202, body: '' };
  });
}

const SEVERITIES = ['critical', 'error', 'warning', 'info'];

/** The Events API v2 rules the receiver applies (the documented required fields and limits). */
export function pagerDutyEventErrors(json: unknown): string[] {
  const event = json as Record<string, unknown> | undefined;
  if (!event || typeof event !== 'object') return ['body is not a JSON object'];
  const errors: string[] = [];
  if (typeof event.routing_key !== 'string' || event.routing_key.length !== 32)
    errors.push("'routing_key' must be the 32-character integration key");
  if (!['trigger', 'acknowledge', 'resolve'].includes(String(event.event_action)))
    errors.push("'event_action' must be trigger, acknowledge or resolve");
  if (
    event.dedup_key !== undefined &&
    (typeof event.dedup_key !== 'string' || event.dedup_key.length > 255)
  )
    errors.push("'dedup_key' must be a string of at most 255 characters");
  if (event.event_action !== 'trigger' && typeof event.dedup_key !== 'string')
    errors.push("'dedup_key' is required for acknowledge and resolve");
  if (event.event_action === 'trigger') {
    const payload = event.payload as Record<string, unknown> | undefined;
    if (!payload) errors.push("'payload' is required for trigger");
    else {
      if (
        typeof payload.summary !== 'string' ||
        payload.summary.length === 0 ||
        payload.summary.length > 1024
      )
        errors.push("'payload.summary' is required (at most 1024 characters)");
      if (typeof payload.source !== 'string' || payload.source.length === 0)
        errors.push("'payload.source' is required");
      if (!SEVERITIES.includes(String(payload.severity)))
        errors.push("'payload.severity' must be critical, error, warning or info");
      if (payload.timestamp !== undefined && Number.isNaN(Date.parse(String(payload.timestamp))))
        errors.push("'payload.timestamp' must be an ISO 8601 timestamp");
      if (payload.custom_details !== undefined && typeof payload.custom_details !== 'object')
        errors.push("'payload.custom_details' must be an object");
    }
    for (const link of (event.links as { href?: unknown }[] | undefined) ?? []) {
      if (typeof link.href !== 'string') errors.push("each of 'links' needs an href");
    }
  }
  return errors;
}

/** PagerDuty answers 202 with status success and the dedup_key; an invalid event, 400. */
export function startPagerDutyReceiver() {
  let generated = 0;
  return startServiceReceiver((json) => {
    const errors = pagerDutyEventErrors(json);
    if (errors.length > 0) {
      return {
        status: 400,
        body: JSON.stringify({
          status: 'invalid event',
          message: 'Event object is invalid',
          errors,
        }),
        headers: { 'content-type': 'application/json' },
      };
    }
    const dedup = (json as { dedup_key?: string }).dedup_key ?? `generated-${++generated}`;
    return {
      status: 202,
      body: JSON.stringify({ status: 'success', message: 'Event processed', dedup_key: dedup }),
      headers: { 'content-type': 'application/json' },
    };
  });
}
