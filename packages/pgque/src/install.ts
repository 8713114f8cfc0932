import { installScript, packageVersion } from './generated/sql.js';
import type { Queryable } from './queryable.js';

/**
 * The PgQue API level this client and its engine implement: PgQue's function names,
 * signatures, error classes and texts as of that PgQue release. `pgque.api_level()`
 * answers the same in the database.
 */
export const PGQUE_API_LEVEL = '0.3';

/** The complete install script: idempotent, and the same text `install` runs. */
export function installSql(): string {
  return installScript;
}

/** The script that removes the engine: the `pgque` schema and everything in it. Roles stay. */
export function uninstallSql(): string {
  return 'drop schema if exists pgque cascade;\n';
}

/**
 * Installs or upgrades the engine in schema `pgque`. Running it again changes nothing.
 * It runs its own transaction, so pass a pool or an idle client, not one inside `BEGIN`.
 */
export async function install(db: Queryable): Promise<{ version: string }> {
  await db.query(installScript);
  return { version: packageVersion };
}

/** Removes schema `pgque` with every queue, consumer and event in it. */
export async function uninstall(db: Queryable): Promise<void> {
  await db.query(uninstallSql());
}

/** The version installed in the database, or null when the engine is not installed. */
export async function installedVersion(db: Queryable): Promise<string | null> {
  const probe = await db.query("select to_regprocedure('pgque.version()') is not null as present");
  if (!probe.rows[0]?.present) return null;
  const { rows } = await db.query('select pgque.version() as version');
  return (rows[0]?.version as string | undefined) ?? null;
}

/**
 * The PgQue API level of the installed engine (`pgque.api_level()`), or null when the
 * engine is not installed or predates `api_level()` (those engines implement level 0.2).
 */
export async function installedApiLevel(db: Queryable): Promise<string | null> {
  const probe = await db.query(
    "select to_regprocedure('pgque.api_level()') is not null as present",
  );
  if (!probe.rows[0]?.present) return null;
  const { rows } = await db.query('select pgque.api_level() as api_level');
  return (rows[0]?.api_level as string | undefined) ?? null;
}
