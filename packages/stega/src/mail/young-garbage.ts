import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'minor' | 'major'; execution: 'sync' | 'async' }) => void;

let collect: Collect | null | undefined;

/** V8's `gc`, exposed once at run time as test runners do (a noop where V8 refuses). */
function collector(): Collect | null {
  if (collect !== undefined) return collect;
  try {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  } catch {
    collect = null;
  }
  return collect;
}

/**
 * Collects the young generation now (a scavenge: a millisecond or two, not a full GC). A
 * large message streams through buffers the socket, the SMTP parser and the PostgreSQL
 * driver each allocate and drop at once; V8 frees such garbage only when it is pressed to,
 * tens of megabytes later, so a 25 MB message would lift the process's resident memory by
 * that much. Called after each stored chunk of a large message, it keeps that garbage to a
 * chunk or two (issue 23: mail-in below 150 MB while streaming 25 MB).
 */
export function collectYoungGarbage(): void {
  collector()?.({ type: 'minor', execution: 'sync' });
}
