import type { CallOutcome } from '../../domain/delivery-outcome.js';
import { e164Schema } from '../../domain/notification-rules.js';
import type { Delivery, DeliveryChannel } from '../channel.js';
import { TWILIO_ENDPOINT, twilioCreate } from '../transport/twilio-rest.js';

/**
 * What the two Twilio steps of a paged person (sms.ts, voice.ts) share: a verified E.164
 * number as target (kept as the row's secret; the recipient names no number), never planned
 * from a policy's channels, one circuit for Twilio, the webhook time-out.
 */
export const twilioStep = {
  target: e164Schema,
  targets: () => [],
  address: (to: string) => ({ recipient: to, secret: to }),
  // `agent:<id>/<method>/<contact>`: no number in it
  mask: (recipient: string) => recipient,
  endpoint: () => TWILIO_ENDPOINT,
  timeoutMs: (settings) => settings.webhookTimeoutMs,
} satisfies Pick<
  DeliveryChannel<string, unknown>,
  'target' | 'targets' | 'address' | 'mask' | 'endpoint' | 'timeoutMs'
>;

/** The StatusCallback URL of a delivery: its receipts come back there (http/routes/twilio.ts). */
export function twilioStatusCallback(delivery: Delivery): string {
  return `${delivery.settings.publicUrl}/api/twilio/status?delivery=${delivery.row.id}`;
}

/** Creates the step's message or call from the configured number, within the attempt. */
export function twilioStepSend(
  resource: 'Messages' | 'Calls',
  fields: Record<string, string>,
  signal: AbortSignal,
  { settings }: Delivery,
): Promise<CallOutcome> {
  return twilioCreate(
    settings.twilio,
    resource,
    { From: settings.twilio?.fromNumber ?? '', ...fields },
    { signal, timeoutMs: settings.webhookTimeoutMs, allowedNetworks: settings.allowedNetworks },
  );
}
