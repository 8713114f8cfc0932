import type { OpenAPIV3_1 } from 'openapi-types';
import { EVENT_TYPES } from '../events.js';

const header = (
  name: string,
  description: string,
  required = true,
): OpenAPIV3_1.ParameterObject => ({
  name,
  in: 'header',
  required,
  description,
  schema: { type: 'string' },
});

const HEADERS = [
  header('webhook-id', "The delivery's idempotency key: the same on every retry of one delivery."),
  header('webhook-timestamp', 'Unix seconds of this attempt.'),
  header(
    'webhook-signature',
    'Standard Webhooks signature, `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`; sent when the webhook has a secret (docs/references/channels.md, "Webhooks": how the secret maps to a `whsec_` key).',
    false,
  ),
  header('idempotency-key', 'The same value as webhook-id.'),
  header('x-stega-event', 'The event type.'),
  header(
    'x-stega-signature',
    'Deprecated (removed in the next release): `sha256=<hex HMAC-SHA256 of the body>`, with a secret only. Verify webhook-signature instead.',
    false,
  ),
];

const call = (type: string, summary: string): OpenAPIV3_1.PathItemObject => ({
  post: {
    summary,
    description:
      'Stega POSTs this to a policy webhook (or REPORT_WEBHOOK_URL). Any 2xx is success; anything else, a redirect or a time-out is retried with the same webhook-id. Targets on loopback, private, link-local, unique-local or multicast addresses are refused unless listed in WEBHOOK_ALLOWED_NETWORKS.',
    parameters: HEADERS,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['type', 'data'],
            properties: { type: { type: 'string', enum: [type] }, data: { type: 'object' } },
          },
        },
      },
    },
    responses: { '2XX': { description: 'accepted' } },
  },
});

/** The OpenAPI 3.1 `webhooks` object: the calls Stega makes to receivers. */
export const OPENAPI_WEBHOOKS: Record<string, OpenAPIV3_1.PathItemObject> = {
  [EVENT_TYPES.slaBreached]: call(EVENT_TYPES.slaBreached, 'An SLA target was missed'),
  [EVENT_TYPES.slaWarning]: call(EVENT_TYPES.slaWarning, 'An SLA clock passed its warning share'),
  [EVENT_TYPES.slaEscalated]: call(
    EVENT_TYPES.slaEscalated,
    'An escalation level fired (a level’s webhook): the breach fields plus escalation_id, level, levels, delay_minutes, fire_at, agents, and acknowledge_url (a signed link to acknowledge it)',
  ),
  [EVENT_TYPES.activityReport]: call(EVENT_TYPES.activityReport, 'The weekly activity report'),
};
