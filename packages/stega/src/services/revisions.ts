import type { Queryable } from '@stega/pgque';
import { type Revised, revisionLock } from '../db/revisions.js';
import { NotFoundError, StaleRevisionError } from './errors.js';

/**
 * Takes the row of a change (see revisionLock) and returns its stored revision.
 * @throws NotFoundError
 */
export async function lockForChange(tx: Queryable, what: Revised, id: number): Promise<number> {
  const current = await revisionLock(tx, what, id);
  if (current === null) throw new NotFoundError(what, id);
  return current;
}

/**
 * Refuses a change whose sender saw another revision than the stored one (an If-Match):
 * someone changed it since. Without `expected` the change goes on, on top of what is stored.
 * @throws StaleRevisionError
 */
export function requireSameRevision(
  what: Revised,
  expected: number | undefined,
  current: number,
): void {
  if (expected !== undefined && expected !== current) {
    throw new StaleRevisionError(what, expected, current);
  }
}

/**
 * Both at once, for changes only admins make (no permission to check in between).
 * @throws NotFoundError, StaleRevisionError
 */
export async function requireRevision(
  tx: Queryable,
  what: Revised,
  id: number,
  expected: number | undefined,
): Promise<void> {
  requireSameRevision(what, expected, await lockForChange(tx, what, id));
}
