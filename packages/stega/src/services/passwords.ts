import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { ServerBusyError, ValidationError } from './errors.js';

/**
 * Password hashing with scrypt (Node's own, no native add-on to install). Parameters are
 * OWASP's listed equivalent of N=2^17: N=2^15, r=8, p=3 — 32 MiB per hash, so a burst of
 * sign-ins cannot exhaust memory; at most HASHING_AT_ONCE hashes run together, at most
 * HASHING_WAITING_MAX others wait (a few seconds' work), and past that a hash is refused at
 * once with a 503 and Retry-After (ServerBusyError): no flood of requests can queue
 * unbounded work for every later sign-in to wait behind. The stored form carries its parameters, so they can be raised without a migration:
 * `scrypt$<N>$<r>$<p>$<salt, base64>$<hash, base64>`.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_BYTES = 32;
const HASHING_AT_ONCE = 2;
/** Hashes that may wait for a turn (~280 ms each, two at once: under 5 s of waiting). */
export const HASHING_WAITING_MAX = 32;
/** What a refused hash's Retry-After says: about the time the full queue takes to drain. */
const BUSY_RETRY_SECONDS = 5;

/** The shortest password accepted, and the longest (hashing a megabyte is no password). */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 200;

let running = 0;
const waiting: (() => void)[] = [];
/** Hashes computed and refused so far, in this process. */
const counts = { hashed: 0, refused: 0 };

/** How much hashing this process has done and refused, and what runs and waits now. */
export function passwordHashing(): {
  hashed: number;
  refused: number;
  running: number;
  waiting: number;
} {
  return { ...counts, running, waiting: waiting.length };
}

async function derive(password: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  if (running >= HASHING_AT_ONCE) {
    if (waiting.length >= HASHING_WAITING_MAX) {
      counts.refused++;
      throw new ServerBusyError(BUSY_RETRY_SECONDS);
    }
    await new Promise<void>((go) => waiting.push(go));
  }
  running++;
  counts.hashed++;
  try {
    const N = params.N ?? PARAMS.N;
    const r = params.r ?? PARAMS.r;
    const maxmem = 128 * N * r * 2;
    return await new Promise<Buffer>((resolve, reject) =>
      scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...params, maxmem }, (err, key) =>
        err ? reject(err) : resolve(key),
      ),
    );
  } finally {
    running--;
    waiting.shift()?.();
  }
}

export async function passwordHash(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  const { N, r, p } = PARAMS;
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** A stored hash no password matches: unknown accounts cost the same time as known ones. */
const NOBODY = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_BYTES).toString('base64')}`;

/** Whether `password` matches `stored` (null: no password set; still takes a hash's time). */
export async function passwordVerify(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? NOBODY).split('$');
  const [scheme, n, r, p, salt, hash] = parts;
  if (parts.length !== 6 || scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return stored !== null && key.length === expected.length && timingSafeEqual(key, expected);
}

/** @throws ValidationError naming `field` for a password too short, too long, or the email. */
export function requireGoodPassword(password: string, email: string, field: string): void {
  const problem =
    password.length < PASSWORD_MIN
      ? `must have at least ${PASSWORD_MIN} characters`
      : password.length > PASSWORD_MAX
        ? `must have at most ${PASSWORD_MAX} characters`
        : password.trim().toLowerCase() === email.trim().toLowerCase()
          ? 'must not be your email address'
          : undefined;
  if (problem) throw new ValidationError([{ path: field, message: problem }]);
}
