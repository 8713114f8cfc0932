import { PgqueInvalidInputError } from './errors.js';

// Client-side checks of arguments, so a mistake fails before any query with a message
// that names the argument.

/** Largest value of a Postgres int4: the `max_return` that drains a whole batch. */
export const MAX_INT4 = 2_147_483_647;

/** `pgque_<name>` must fit a 63-byte NOTIFY channel. */
export const MAX_QUEUE_NAME_BYTES = 57;

export function requireName(value: unknown, field: string, operation: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new PgqueInvalidInputError(
      `${operation}: ${field} must be a non-empty string, got ${describe(value)}`,
      field,
      { operation },
    );
  }
  if (value.includes('\u0000')) {
    throw new PgqueInvalidInputError(`${operation}: ${field} must not contain NUL`, field, {
      operation,
    });
  }
  return value;
}

export function requireQueueName(value: unknown, operation: string): string {
  const name = requireName(value, 'queue', operation);
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_QUEUE_NAME_BYTES) {
    throw new PgqueInvalidInputError(
      `${operation}: queue name is ${bytes} bytes, at most ${MAX_QUEUE_NAME_BYTES} are allowed`,
      'queue',
      { operation },
    );
  }
  return name;
}

/** Cooperative consumer and subconsumer names: non-empty, no dot (the engine maps C.S). */
export function requireCoopName(value: unknown, field: string, operation: string): string {
  const name = requireName(value, field, operation);
  if (name.includes('.')) {
    throw new PgqueInvalidInputError(
      `${operation}: ${field} must not contain a dot, got ${JSON.stringify(name)}`,
      field,
      { operation },
    );
  }
  return name;
}

export function requireInteger(
  value: unknown,
  field: string,
  operation: string,
  range: { min: number; max: number },
): number {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < range.min ||
    value > range.max
  ) {
    throw new PgqueInvalidInputError(
      `${operation}: ${field} must be an integer between ${range.min} and ${range.max}, got ${describe(value)}`,
      field,
      { operation },
    );
  }
  return value;
}

export function requireNonNegative(value: unknown, field: string, operation: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new PgqueInvalidInputError(
      `${operation}: ${field} must be a finite number >= 0, got ${describe(value)}`,
      field,
      { operation },
    );
  }
  return value;
}

/** Batch and event ids: a bigint, or a non-negative safe integer number. */
export function requireId(value: unknown, field: string, operation: string): bigint {
  if (typeof value === 'bigint' && value >= 0n) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  throw new PgqueInvalidInputError(
    `${operation}: ${field} must be a non-negative bigint, got ${describe(value)}`,
    field,
    { operation },
  );
}

/** Serialises a payload to JSON text; top-level `undefined` becomes JSON `null`. */
export function payloadToJson(value: unknown, field: string, operation: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (error) {
    throw new PgqueInvalidInputError(
      `${operation}: ${field} is not JSON-serialisable: ${(error as Error).message}`,
      field,
      { operation, cause: error },
    );
  }
  if (text === undefined) {
    throw new PgqueInvalidInputError(
      `${operation}: ${field} is not JSON-serialisable (${typeof value})`,
      field,
      { operation },
    );
  }
  return text;
}

/** An interval given as milliseconds (number) or as Postgres interval text. */
export function intervalText(value: unknown, field: string, operation: string): string {
  if (typeof value === 'number') {
    requireNonNegative(value, field, operation);
    return `${value} milliseconds`;
  }
  if (typeof value === 'string' && value.trim() !== '') return value;
  throw new PgqueInvalidInputError(
    `${operation}: ${field} must be milliseconds (number) or interval text like '2 minutes', got ${describe(value)}`,
    field,
    { operation },
  );
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null) return 'null';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}
