import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { ValidationError } from '../services/errors.js';
import { errorSchema, errors } from './schemas.js';

/**
 * Optimistic concurrency for the settings edited as a whole (schedules, escalation and SLA
 * policies, calendars, teams): GET gives the revision as a strong ETag, and a PATCH may send
 * it back in If-Match; once someone else's change came in between, the PATCH is refused with
 * 412 (STEGA_ERR_STALE) and writes nothing. A PATCH without If-Match (or with `*`) applies to
 * whatever is stored, as before.
 */
export const ifMatchHeaders = z.object({
  'if-match': z
    .string()
    .max(200)
    .optional()
    .describe(
      'the ETag of the revision the change was made from, e.g. "3": refused (412) when another change came since; absent or *: any',
    ),
});

/** The error answers of a PATCH that takes If-Match. */
export const revisedErrors = { ...errors, 412: errorSchema } as const;

/** The ETag of a revision. */
const etagOf = (revision: number): string => `"${revision}"`;

/** Answers with a revised setting and its revision as the ETag. */
export function sendRevised<T extends { revision: number }>(reply: FastifyReply, setting: T) {
  return reply.header('etag', etagOf(setting.revision)).send(setting);
}

/**
 * The revision a request's If-Match names; undefined without one or for `*`.
 * @throws ValidationError when it is not an ETag this API gave (a weak one included)
 */
export function ifMatchOf(request: { headers: { 'if-match'?: string | undefined } }) {
  const header = request.headers['if-match'];
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^\s*"(\d{1,9})"\s*$/.exec(header);
  if (!match) {
    throw new ValidationError([
      { path: 'If-Match', message: 'must be the ETag a GET gave, such as "3", or *' },
    ]);
  }
  return Number(match[1]);
}
