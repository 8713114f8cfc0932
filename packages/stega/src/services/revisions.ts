import type { Queryable } from '@stega/pgque';
import { type Revised, revisionLock } from '../db/revisions.js';
import { NotFoundError, StaleRevisionError } from './errors.js';

/**
 * Takes the row of a change (see revisionLock) and refuses the change when its sender saw
 * another revision than the stored one (an If-Match): someone changed it since. Without
 * `expected` the change goes on, on top of whatever is stored.
 * @throws NotFoundError, StaleRevisionError
 */
export async function requireRevision(
  tx: Queryable,
  what: Revised,
  id: number,
  expected: number | undefined,
): Promise<void> {
  const current = await revisionLock(tx, what, id);
  if (current === null) throw new NotFoundError(what, id);
  if (expected !== undefined && expected !== current) {
    throw new StaleRevisionError(what, expected, current);
  }
}
