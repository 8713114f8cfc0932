import { createHmac } from 'node:crypto';

export interface WebhookRequest {
  url: string;
  /** HMAC-SHA256 key; when set the body is signed in `X-Stega-Signature: sha256=<hex>`. */
  secret: string | undefined;
  /** Same for every attempt of one delivery, so the receiver can drop repeats. */
  idempotencyKey: string;
  eventType: string;
  body: unknown;
  timeoutMs: number;
}

export class WebhookError extends Error {
  override name = 'WebhookError';
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

/** Signs `body` the way receivers verify it: hex HMAC-SHA256 of the exact bytes sent. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** POSTs the JSON body; any non-2xx answer, network error or time-out throws a WebhookError. */
export async function postWebhook(request: WebhookRequest): Promise<void> {
  const body = JSON.stringify(request.body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'stega-webhook/1',
    'idempotency-key': request.idempotencyKey,
    'x-stega-event': request.eventType,
  };
  if (request.secret) headers['x-stega-signature'] = webhookSignature(request.secret, body);
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(request.timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `timed out after ${request.timeoutMs} ms`
        : (error as Error).message;
    throw new WebhookError(`webhook ${request.url} failed: ${reason}`, undefined);
  }
  await response.body?.cancel();
  if (!response.ok) {
    throw new WebhookError(`webhook ${request.url} answered ${response.status}`, response.status);
  }
}
