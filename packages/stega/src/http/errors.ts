import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { urlForLog } from '../log.js';
import { AppError, type Issue, type RetryLater, toAppError } from '../services/errors.js';

/**
 * The one error handler: catalogue errors keep their status, code, issues and Retry-After
 * (a 503 STEGA_ERR_BUSY included); request validation failures become 400 naming every
 * failing field; Fastify's own client errors
 * (malformed JSON, wrong content type, body too large) keep their 4xx; everything else is
 * logged with the request's context and answered with a 500 that shows no internals.
 */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = error.validationContext ?? 'request';
    const issues = error.validation.flatMap(issuesOf);
    return reply.code(400).send({
      error: STATUS_CODES[400],
      code: 'STEGA_ERR_VALIDATION',
      message: `invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    });
  }
  const mapped = toAppError(error);
  // a catalogue 503 (ServerBusyError) is an answer too, not an internal error
  if (mapped instanceof AppError && (mapped.status < 500 || mapped.status === 503)) {
    if (mapped.status >= 500) request.log.warn({ code: mapped.code }, mapped.message);
    else if (mapped.status >= 400) request.log.info({ code: mapped.code }, mapped.message);
    const retryAfter = (mapped as Partial<RetryLater>).retryAfterSeconds;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
    return reply.code(mapped.status).send({
      error: STATUS_CODES[mapped.status],
      code: mapped.code,
      message: mapped.message,
      ...(mapped.issues.length > 0 ? { issues: mapped.issues } : {}),
    });
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    return reply.code(status).send({
      error: STATUS_CODES[status] ?? 'Client Error',
      code: error.code ?? 'STEGA_ERR_CLIENT',
      message: error.message,
      ...(status === 400 ? { issues: [{ path: '(body)', message: error.message }] } : {}),
    });
  }
  request.log.error(
    {
      err: error,
      method: request.method,
      url: urlForLog(request.url),
      route: request.routeOptions.url,
    },
    'request failed',
  );
  return reply.code(500).send({
    error: STATUS_CODES[500],
    code: 'STEGA_ERR_INTERNAL',
    message: `internal error (request ${request.id}); the server log has the details`,
  });
}

/** 404 for a route that does not exist, in the same shape as every other error. */
export function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send({
    error: STATUS_CODES[404],
    code: 'STEGA_ERR_NOT_FOUND',
    message: `no route ${request.method} ${request.url.split('?')[0]}`,
  });
}

interface ValidationItem {
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** `/weekly_hours/monday/0/end` -> `weekly_hours.monday[0].end`; unknown keys get one issue each. */
function issuesOf(item: ValidationItem): Issue[] {
  const base = pathOf(item.instancePath);
  const keys = item.params?.keys;
  if (Array.isArray(keys) && keys.length > 0) {
    return keys.map((key) => ({
      path: base === '(root)' ? String(key) : `${base}.${String(key)}`,
      message: 'is not a known field',
    }));
  }
  return [{ path: base, message: item.message ?? 'is invalid' }];
}

function pathOf(instancePath: string): string {
  let out = '';
  for (const part of instancePath.split('/').filter(Boolean)) {
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out ? `.${part}` : part;
  }
  return out || '(root)';
}
