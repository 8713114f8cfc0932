// Row values as read through any connection: our pools parse int8 as bigint, but a
// caller's own client (passed as `db`) keeps node-postgres' defaults (int8 as string).

export function asBigInt(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' || typeof value === 'string') return BigInt(value);
  throw new TypeError(`expected an int8 value, got ${String(value)}`);
}

export function asBigIntOrNull(value: unknown): bigint | null {
  return value === null || value === undefined ? null : asBigInt(value);
}

export function asBigIntArray(value: unknown): bigint[] {
  if (Array.isArray(value)) return value.map(asBigInt);
  if (typeof value === 'string') {
    const inner = value.slice(1, -1);
    return inner === '' ? [] : inner.split(',').map((item) => BigInt(item));
  }
  throw new TypeError(`expected an int8[] value, got ${String(value)}`);
}

export function asNumberOrNull(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'number' ? value : Number(value);
}

export function asDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

export function asStringOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}
