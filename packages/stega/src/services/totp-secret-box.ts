import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Queryable } from '@stega/pgque';
import { agentTotpListUnsealed, agentTotpReseal } from '../db/agent-totp.js';
import { serverSecretGet } from '../db/server-secrets.js';

/** Every sealed secret starts so; a stored value without it was written in clear. */
export const SEALED_PREFIX = 'v1.';

/**
 * Seals and opens agents' TOTP secrets at rest: AES-256-GCM under a key derived (HKDF-SHA256)
 * from STEGA_TOTP_KEY, else from the random `totp_key` the migration keeps in
 * stega.server_secrets. A sealed value is `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url),
 * the key id being the first 8 hex digits of the key's SHA-256, so a secret sealed under the
 * database's key still opens once STEGA_TOTP_KEY is set (new ones are sealed under it).
 */
export interface TotpSecretBox {
  seal(secret: string): string;
  /** @throws Error when the value was sealed under a key this server does not hold */
  open(stored: string): string;
}

interface Key {
  id: string;
  bytes: Buffer;
}

function keyOf(material: string): Key {
  const bytes = Buffer.from(
    hkdfSync('sha256', Buffer.from(material, 'utf8'), Buffer.alloc(0), 'stega totp secret v1', 32),
  );
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes };
}

/** The box over the configured key (if any) and the database's. */
export async function totpSecretBoxOpen(
  db: Queryable,
  configuredKey: string | undefined,
): Promise<TotpSecretBox> {
  const stored = await serverSecretGet(db, 'totp_key');
  if (!stored) throw new Error('stega.server_secrets has no totp_key secret: run stega migrate');
  const keys = [configuredKey ? keyOf(configuredKey) : undefined, keyOf(stored)].filter(
    (key): key is Key => key !== undefined,
  );
  const sealing = keys[0] as Key;
  return {
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealing.bytes, iv);
      const text = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return [
        'v1',
        sealing.id,
        iv.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
        text.toString('base64url'),
      ].join('.');
    },
    open(value) {
      if (!value.startsWith(SEALED_PREFIX)) return value; // written in clear before issue 24
      const [, id, iv, tag, text] = value.split('.');
      const key = keys.find((k) => k.id === id);
      if (!key || iv === undefined || tag === undefined || text === undefined) {
        throw new Error(
          `a TOTP secret is sealed under key ${id}, which this server does not hold (was STEGA_TOTP_KEY changed?)`,
        );
      }
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(text, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    },
  };
}

/** Seals the secrets stored in clear before issue 24; how many it sealed. Idempotent. */
export async function totpSecretsSeal(db: Queryable, box: TotpSecretBox): Promise<number> {
  let sealed = 0;
  for (const row of await agentTotpListUnsealed(db, SEALED_PREFIX)) {
    const changed = await agentTotpReseal(db, {
      agent_id: row.agent_id,
      from: row.secret,
      to: box.seal(row.secret),
    });
    if (changed) sealed++;
  }
  return sealed;
}
