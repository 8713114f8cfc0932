import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ADMIN_TOKEN_MIN_LENGTH } from '../config.js';
import type { Logger } from '../log.js';
import { newToken } from './tokens.js';

/**
 * The admin token of this instance. STEGA_ADMIN_TOKEN when set (config.ts checked its length). Otherwise a random token kept
 * in `<dataDir>/admin-token` (created on first use, mode 0600, reused by later starts and by
 * every process sharing the data directory), so a newcomer's `npm start` is never open to the
 * network and the token is one `cat` away. The token itself is never logged.
 */
/** Where the generated admin token is kept (when STEGA_ADMIN_TOKEN is not set). */
export function adminTokenFile(config: { dataDir: string }): string {
  return path.join(config.dataDir, 'admin-token');
}

export async function resolveAdminToken(
  config: { adminToken: string | undefined; dataDir: string },
  logger: Logger,
): Promise<string> {
  if (config.adminToken) return config.adminToken;
  const file = adminTokenFile(config);
  let token = await readToken(file);
  if (!token) {
    await mkdir(config.dataDir, { recursive: true });
    try {
      await writeFile(file, `${newToken()}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    token = await readToken(file);
    if (!token) throw new Error(`could not read the admin token back from ${file}`);
  }
  if (token.length < ADMIN_TOKEN_MIN_LENGTH) {
    throw new Error(
      `${file} holds an admin token of ${token.length} characters, fewer than ${ADMIN_TOKEN_MIN_LENGTH}: delete the file to have a new one generated, or set STEGA_ADMIN_TOKEN (make one with \`openssl rand -hex 32\`)`,
    );
  }
  logger.warn(
    { file },
    `STEGA_ADMIN_TOKEN is not set: the admin token is in ${file} — e.g. curl -H "Authorization: Bearer $(cat ${file})" …/api/breaches`,
  );
  return token;
}

async function readToken(file: string): Promise<string | undefined> {
  try {
    const token = (await readFile(file, 'utf8')).trim();
    return token === '' ? undefined : token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
