import twilio from 'twilio';
import { alertSubject } from '../alert-text.js';
import type { DeliveryChannel } from '../channel.js';
import { twilioStatusCallback, twilioStep, twilioStepSend } from './twilio-step.js';

/**
 * A voice call through Twilio (a paged person's `voice` step) to their verified number: the
 * call's TwiML reads the alert and gathers one key; "press 1" posts to
 * `/api/twilio/voice?delivery=<id>`, which acknowledges (checked to come from Twilio and to
 * be that call). Call progress (queued, ringing, in-progress, completed, failed, busy,
 * no-answer) comes back to `/api/twilio/status` as receipts. Only planned by rules. A
 * quiet hours' digest is read without the key press: warnings are not acknowledged.
 */
export function callTwiml(text: string, gatherUrl: string | null): string {
  const response = new twilio.twiml.VoiceResponse();
  if (gatherUrl === null) {
    // nothing to acknowledge (a digest of warnings): the call only reads it
    response.say(text);
    return response.toString();
  }
  const gather = response.gather({ numDigits: 1, action: gatherUrl, method: 'POST', timeout: 10 });
  gather.say(`${text}. Press 1 to acknowledge.`);
  response.say('Nothing was pressed. Goodbye.');
  return response.toString();
}

export const voiceChannel: DeliveryChannel<
  string,
  { to: string; twiml: string; callback: string }
> = {
  name: 'voice',
  ...twilioStep,
  async build(delivery) {
    const { row, alert, settings, digest } = delivery;
    const said = digest
      ? `Stega. ${digest.subject}. ${digest.items.map((item) => item.title).join('. ')}`
      : `Stega alert. ${alertSubject(alert)}`;
    return {
      to: row.secret ?? '',
      twiml: callTwiml(
        said,
        digest ? null : `${settings.publicUrl}/api/twilio/voice?delivery=${row.id}`,
      ),
      callback: twilioStatusCallback(delivery),
    };
  },
  send: (message, signal, delivery) =>
    twilioStepSend(
      'Calls',
      { To: message.to, Twiml: message.twiml, StatusCallback: message.callback },
      signal,
      delivery,
    ),
};
