import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationError } from '../services/errors.js';

/**
 * PostgreSQL text cannot hold U+0000: a NUL byte in a query string, a path or a JSON body
 * reached the database and failed there (a 500 and an error log). Every request is checked
 * before validation and refused with a 400 naming the field instead. Only JSON bodies are
 * walked: a form (an inbound mail's webhook) is stored as received and its parser decides.
 */

/** The dotted path (`tags[2].name`) of the first string or key holding U+0000 in `value`. */
export function nulPath(value: unknown, root: string): string | undefined {
  // an explicit stack: a deeply nested body must not overflow the call stack
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [item, path] = stack.pop() as [unknown, string];
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return path;
    } else if (Array.isArray(item)) {
      item.forEach((element, i) => {
        stack.push([element, `${path}[${i}]`]);
      });
    } else if (item !== null && typeof item === 'object' && !Buffer.isBuffer(item)) {
      for (const [key, element] of Object.entries(item)) {
        const at = path ? `${path}.${key}` : key;
        if (key.includes('\u0000')) return path || '(key)';
        stack.push([element, at]);
      }
    }
  }
  return undefined;
}

const isJson = (request: FastifyRequest) =>
  /^application\/([\w.+-]*\+)?json\b/i.test(request.headers['content-type'] ?? '');

/** Refuses (400, STEGA_ERR_VALIDATION) a request with a NUL character in its input. */
export function refuseNulBytes(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const at =
      nulPath(request.params, '') ??
      nulPath(request.query, '') ??
      (isJson(request) ? nulPath(request.body, '') : undefined);
    if (at !== undefined) {
      throw new ValidationError([
        { path: at || '(input)', message: 'must not contain a NUL character (\\u0000)' },
      ]);
    }
  });
}
