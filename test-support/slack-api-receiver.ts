import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';

/**
 * A local stand-in for Slack's Web API `chat.postMessage` (what @slack/web-api sends:
 * `POST <base>/chat.postMessage`, form-encoded, `Authorization: Bearer <bot token>`): a wrong
 * token answers `{ok: false, error: 'invalid_auth'}`, a message without a channel
 * `channel_not_found`; otherwise `{ok: true}` and the message is kept. It also plays the
 * person: `press` posts a block action to the app's Request URL signed with the signing
 * secret (or with the signature and timestamp given: forged and replayed requests).
 */
export interface SlackPosted {
  channel: string;
  text: string;
  blocks: { type: string; elements?: { action_id?: string; value?: string }[] }[];
  at: number;
}

export async function startSlackApiReceiver(options: { botToken: string; signingSecret: string }) {
  const posted: SlackPosted[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const params = request.headers['content-type']?.includes('json')
        ? (JSON.parse(body) as Record<string, unknown>)
        : Object.fromEntries(new URLSearchParams(body));
      const answer = (json: unknown) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(json));
      };
      if (!request.url?.endsWith('/chat.postMessage'))
        return answer({ ok: false, error: 'unknown_method' });
      if (request.headers.authorization !== `Bearer ${options.botToken}`) {
        return answer({ ok: false, error: 'invalid_auth' });
      }
      if (!params.channel) return answer({ ok: false, error: 'channel_not_found' });
      const blocks =
        typeof params.blocks === 'string' ? JSON.parse(params.blocks) : (params.blocks ?? []);
      posted.push({ channel: String(params.channel), text: String(params.text ?? ''), blocks, at });
      answer({ ok: true, channel: `D${params.channel}`, ts: `${at / 1000}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  /** The signed form of an interaction: `payload=<json>`, with Slack's headers. */
  const signed = (payload: unknown, timestamp = Math.floor(Date.now() / 1000)) => {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const signature = `v0=${createHmac('sha256', options.signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    return { body, timestamp: String(timestamp), signature };
  };

  return {
    url: `http://127.0.0.1:${port}/api/`,
    posted,
    /** The value of a posted message's button `actionId`. */
    buttonValue(message: SlackPosted, actionId: string): string | undefined {
      for (const block of message.blocks) {
        const element = block.elements?.find((e) => e.action_id === actionId);
        if (element) return element.value;
      }
      return undefined;
    },
    /** `userId` presses the button; `forge` replaces the signature or the timestamp. */
    async press(
      requestUrl: string,
      userId: string,
      actionId: string,
      value: string,
      forge: { signature?: string; timestamp?: number } = {},
    ) {
      const payload = {
        type: 'block_actions',
        user: { id: userId },
        actions: [{ action_id: actionId, value }],
      };
      const request = signed(payload, forge.timestamp);
      const response = await fetch(requestUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': request.timestamp,
          'x-slack-signature': forge.signature ?? request.signature,
        },
        body: request.body,
      });
      return { status: response.status, text: await response.text() };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
