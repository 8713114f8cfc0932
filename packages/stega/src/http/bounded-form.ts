import type { Readable } from 'node:stream';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { type AppError, TooLargeError, ValidationError } from '../services/errors.js';

/** How much of a form a public route reads before it refuses the post. */
export interface FormLimits {
  /** Fields (and parts of a multipart form) at most; one more is refused with 413. */
  fields: number;
  /** Bytes of a field's name at most (400 past it). */
  nameBytes: number;
  /** Bytes of a field's value at most, unless `large` names it (413 past it). */
  valueBytes: number;
  /** Fields allowed larger values, each with its own bound and the error past it. */
  large: Record<string, { bytes: number; tooLarge: (bytes: number) => AppError }>;
  /** Bytes of the whole body at most (413 past it, counted as it arrives). */
  bodyBytes: number;
}

/**
 * Reads a multipart/form-data or application/x-www-form-urlencoded body into its string
 * fields as it arrives (busboy), refusing it at the first field, name or byte past `limits`
 * rather than after building the whole form: a post of millions of empty fields is stopped at
 * field `limits.fields + 1`. File parts are read through and dropped (they count as parts).
 * Calls `done` once, with the fields or a catalogue error (400, 413).
 */
export function readBoundedForm(
  headers: Record<string, string | string[] | undefined>,
  payload: Readable,
  limits: FormLimits,
  done: (error: Error | null, fields?: Record<string, string>) => void,
): void {
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.bodyBytes) {
    done(bodyTooLarge(limits.bodyBytes));
    return;
  }
  const largest = Math.max(limits.valueBytes, ...Object.values(limits.large).map((l) => l.bytes));
  let parser: BusboyInstance;
  try {
    parser = new Busboy({
      headers: headers as { 'content-type': string },
      limits: {
        // one past each bound: busboy stops there (silently, for a urlencoded body), and the
        // count below sees the one too many
        fields: limits.fields + 1,
        parts: limits.fields + 1,
        fieldNameSize: limits.nameBytes + 1,
        fieldSize: largest + 1,
        headerPairs: 20,
        headerSize: 16 * 1024,
      },
    });
  } catch (error) {
    done(new ValidationError([{ path: '(body)', message: (error as Error).message }]));
    return;
  }
  const fields: Record<string, string> = Object.create(null);
  let count = 0;
  let received = 0;
  let settled = false;
  const finish = (error: Error | null) => {
    if (settled) return;
    settled = true;
    payload.off('data', onData);
    if (error) {
      payload.unpipe(parser);
      // the rest of the body is read and dropped by the HTTP server after the answer
      payload.resume();
      done(error);
    } else {
      done(null, { ...fields });
    }
  };
  const tooMany = () =>
    finish(
      new TooLargeError([
        { path: '(body)', message: `a form of more than ${limits.fields} fields is refused` },
      ]),
    );
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limits.bodyBytes) finish(bodyTooLarge(limits.bodyBytes));
  };
  parser.on('field', (name: string, value: string, nameTruncated: boolean) => {
    if (settled) return;
    if (++count > limits.fields) return tooMany();
    if (nameTruncated || Buffer.byteLength(name) > limits.nameBytes) {
      return finish(
        new ValidationError([
          {
            path: '(body)',
            message: `a field name longer than ${limits.nameBytes} bytes is refused`,
          },
        ]),
      );
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    const large = Object.hasOwn(limits.large, name) ? limits.large[name] : undefined;
    if (large && bytes > large.bytes) return finish(large.tooLarge(bytes));
    if (!large && bytes > limits.valueBytes) {
      return finish(
        new TooLargeError([
          { path: name, message: `is longer than ${limits.valueBytes} bytes, the most taken` },
        ]),
      );
    }
    fields[name] = value;
  });
  parser.on('file', (_name: string, file: Readable) => {
    if (++count > limits.fields) tooMany();
    file.resume();
  });
  parser.on('fieldsLimit', tooMany);
  parser.on('partsLimit', tooMany);
  parser.on('filesLimit', tooMany);
  parser.on('error', (error: Error) =>
    finish(new ValidationError([{ path: '(body)', message: error.message }])),
  );
  parser.on('finish', () => finish(null));
  payload.on('error', (error) => finish(error));
  payload.on('data', onData);
  payload.pipe(parser);
}

function bodyTooLarge(bytes: number): AppError {
  return new TooLargeError([
    { path: '(body)', message: `a body of more than ${bytes} bytes is refused` },
  ]);
}
