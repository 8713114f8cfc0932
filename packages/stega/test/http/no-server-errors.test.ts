import { Writable } from 'node:stream';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';
import { teamScene } from './team-scene.js';

/**
 * Bad input is a 400, never a 500 and never an error in the log: for every operation of the
 * OpenAPI document (and the hidden acknowledge page), fast-check makes requests from the
 * operation's own parameters and body schema, filled with valid values and with the inputs
 * that broke it before: NUL bytes, malformed and forged list cursors, dates out of range or
 * impossible, huge numbers, broken percent escapes, lone surrogates. Each request is made as
 * the admin (who passes every access rule, so input reaches the handlers), and its answer
 * must be below 500. A fixed seed makes every run the same requests.
 */

const SEED = 24_006;
/** Requests per target (each parameter, and the body) of an operation. */
const RUNS_PER_TARGET = 40;

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  minimum?: number;
  maximum?: number;
};

interface Operation {
  method: string;
  path: string;
  params: { name: string; in: 'path' | 'query'; schema: Schema; required: boolean }[];
  body: Schema | null;
  /** Answers an endless stream (server-sent events): its status is read, then it is closed. */
  stream?: boolean;
}

const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Inputs that broke the API (NUL bytes, forged cursors, instants PostgreSQL refuses, …). */
const breakers = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  'ticket\u0000subject',
  '!!!',
  cursor(['x', 1]),
  cursor(['2026-13-45T99:00:00Z', 1]),
  cursor(['\u0000', 1]),
  cursor(['urgent', -1]),
  cursor([1, 2]),
  '10000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '-271821-04-20T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '99999999999999999999999',
  '-9223372036854775809',
  '1e309',
  '%',
  '%zz',
);

/** Inputs merely odd. */
const oddities = fc.constantFrom(
  '',
  ' ',
  '-1',
  '0',
  '1.5',
  'NaN',
  'null',
  'none',
  'me',
  '[]',
  '{}',
  '\uD800',
  '\uFFFF',
  '𝕏 ☃ é',
  "'; drop table stega.tickets; --",
  '-',
  '!word',
  '-printer',
  '-a -b -"c d"',
  '"',
  '(',
  ' or ',
  'x'.repeat(5000),
  cursor([null, 1]),
  cursor(['', 1e20]),
  cursor({ a: 1 }),
  cursor('x'),
  '2026-03-02T25:61:61Z',
  '9999-12-31T23:59:59.999+14:00',
  '2026-03-02',
  'yesterday',
);

const hostileStrings = fc.oneof(
  { weight: 3, arbitrary: breakers },
  { weight: 1, arbitrary: oddities },
);

const anyString = fc.oneof(
  { weight: 3, arbitrary: hostileStrings },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

const numbers = fc.oneof(
  fc.integer({ min: -3, max: 12 }),
  fc.constantFrom(0, -1, 1e20, -1e20, 2 ** 53, 2 ** 31, 1.5, Number.MAX_VALUE),
);

/** A JSON value of any shape (for a body field of the wrong type, or an unknown one). */
const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyString,
    numbers,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(anyString, tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** A value for `schema`: mostly of its shape (enum members, numbers in range, objects of its properties), sometimes anything. */
function arbitraryFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return anyJson;
  const shaped = shapedArbitraryFor(schema, depth);
  return fc.oneof(
    { weight: 6, arbitrary: shaped },
    { weight: 1, arbitrary: hostileStrings },
    { weight: 1, arbitrary: anyJson },
  );
}

function shapedArbitraryFor(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  const variants = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (variants && variants.length > 0) {
    return fc.oneof(...variants.map((variant) => arbitraryFor(variant, depth + 1)));
  }
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const type = [schema.type ?? 'string'].flat()[0];
  switch (type) {
    case 'integer':
    case 'number': {
      const min = Math.ceil(Math.max(schema.minimum ?? -10, -10));
      const max = Math.floor(Math.min(schema.maximum ?? 1000, 1000));
      return min <= max ? fc.oneof(numbers, fc.integer({ min, max })) : numbers;
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(arbitraryFor(schema.items, depth + 1), { maxLength: 3 });
    case 'object': {
      const properties = Object.entries(schema.properties ?? {});
      if (properties.length === 0) return fc.dictionary(anyString, anyJson, { maxKeys: 2 });
      return fc.record(
        Object.fromEntries(properties.map(([name, sub]) => [name, arbitraryFor(sub, depth + 1)])),
        { requiredKeys: [] },
      );
    }
    default:
      return schema.format === 'date-time'
        ? fc.oneof(
            hostileStrings,
            fc
              .date({
                min: new Date('1900-01-01'),
                max: new Date('2200-01-01'),
                noInvalidDate: true,
              })
              .map((d) => d.toISOString()),
          )
        : anyString;
  }
}

/** A parameter as it travels in a URL: usually percent-encoded, sometimes raw (broken escapes). */
function urlText(value: unknown): fc.Arbitrary<string> {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // encodeURIComponent throws on a lone surrogate: it travels as U+FFFD, as a browser sends it
  const wellFormed = text.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    '\uFFFD',
  );
  const encoded = encodeURIComponent(wellFormed);
  return fc.constantFrom(encoded, text === '%' || text === '%zz' ? text : encoded);
}

/**
 * One request of `operation`: one parameter (or the body) is the target and gets a hostile
 * value; the others are absent or of their schema's shape, so the hostile one reaches as far
 * into the handler as valid company lets it.
 */
function requestOf(operation: Operation): fc.Arbitrary<InjectOptions> {
  const targets = operation.params.length + (operation.body ? 1 : 0);
  return fc.integer({ min: 0, max: Math.max(0, targets - 1) }).chain((target) => {
    const params = operation.params.map((param, i) =>
      fc
        .tuple(
          i === target
            ? fc.oneof({ weight: 4, arbitrary: hostileStrings }, { weight: 1, arbitrary: anyJson })
            : param.in === 'path'
              ? fc.oneof(fc.integer({ min: 1, max: 6 }), arbitraryFor(param.schema))
              : arbitraryFor(param.schema),
          fc.boolean(),
        )
        .chain(([value, present]) =>
          urlText(value).map((text) => ({
            param,
            text,
            present: present || param.required || i === target,
          })),
        ),
    );
    const body = operation.body ? arbitraryFor(operation.body) : fc.constant(undefined);
    return fc.tuple(fc.tuple(...params), body).map(([values, payload]) => {
      let url = operation.path;
      const query: string[] = [];
      for (const { param, text, present } of values) {
        if (param.in === 'path') url = url.replace(`{${param.name}}`, text || 'x');
        else if (present) query.push(`${param.name}=${text}`);
      }
      if (query.length > 0) url += `?${query.join('&')}`;
      const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
      if (payload === undefined) {
        return { method: operation.method as InjectOptions['method'], url, headers };
      }
      headers['content-type'] = 'application/json';
      return {
        method: operation.method as InjectOptions['method'],
        url,
        headers,
        payload: JSON.stringify(payload),
      };
    });
  });
}

describe('no input makes a 5xx or an error log', async () => {
  const errorLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        if (JSON.parse(line).level >= 50) errorLines.push(line);
      }
      done();
    },
  });
  const t = await startTestApp(undefined, createLogger('warn', 'web', 'json', sink), {
    AUTH_FAILURES_MAX: '1000000',
    AUTH_ACCOUNT_FAILURES_MAX: '1000000',
  });
  const operations: Operation[] = [];

  beforeAll(async () => {
    const scene = await teamScene(t);
    const ticket = await scene.ticket({ team: scene.blue.id, subject: 'Printer on fire' });
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${ticket.id}/comments`,
      payload: { body: 'the printer is still on fire', author_type: 'agent' },
    });
    await scene.escalatedTicket(scene.blue.id);
    const doc = (await t.admin({ method: 'GET', url: '/api/openapi.json' })).body;
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        operations.push({
          method: method.toUpperCase(),
          path,
          params: (op.parameters ?? []).map((p: any) => ({
            name: p.name,
            in: p.in,
            schema: p.schema ?? {},
            required: Boolean(p.required),
          })),
          body: op.requestBody?.content?.['application/json']?.schema ?? null,
          stream: Boolean(op.responses?.['200']?.content?.['text/event-stream']),
        });
      }
    }
    // the signed link's page is hidden from the document, and public
    const token: Schema = { type: 'string' };
    operations.push(
      {
        method: 'GET',
        path: '/acknowledge',
        params: [{ name: 'token', in: 'query', schema: token, required: true }],
        body: null,
      },
      {
        method: 'POST',
        path: '/acknowledge',
        params: [],
        body: { type: 'object', properties: { token } },
      },
    );
  });

  it('answers every operation below 500 whatever it is sent, and logs no error', async () => {
    expect(operations.length).toBeGreaterThan(80);
    const failures: string[] = [];
    for (const operation of operations) {
      let seen = '';
      const details = await fc.check(
        fc.asyncProperty(requestOf(operation), async (request) => {
          if (operation.stream) {
            const streamed = await t.app.inject({ ...request, payloadAsStream: true });
            streamed.stream().destroy();
            if (streamed.statusCode < 500) return true;
            seen = `${streamed.statusCode}`;
            return false;
          }
          const response = await t.app.inject(request);
          if (response.statusCode < 500) return true;
          seen = `${response.statusCode} ${response.body.slice(0, 200)}`;
          return false;
        }),
        {
          seed: SEED,
          numRuns:
            RUNS_PER_TARGET * Math.max(1, operation.params.length + (operation.body ? 1 : 0)),
          endOnFailure: true,
        },
      );
      if (details.failed) {
        const request = details.counterexample?.[0] as InjectOptions | undefined;
        failures.push(
          `${operation.method} ${operation.path}: ${seen} <- ${request?.url} ${String(request?.payload ?? '').slice(0, 300)}`,
        );
      }
    }
    expect(failures).toEqual([]);
    expect(errorLines).toEqual([]);
  }, 600_000);
});
