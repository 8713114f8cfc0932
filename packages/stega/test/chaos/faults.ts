/** One fault the chaos suite injected, with when it happened (Date.now() values). */
export interface Fault {
  kind: 'worker-kill' | 'worker-stop' | 'worker-term' | 'ticker-kill' | 'jobs-kill' | 'pg-restart';
  /** When it started: the signal was sent, or the restart began. */
  at: number;
  /** When it ended: SIGCONT, or PostgreSQL accepting connections again. */
  end?: number;
  /** The member (sla-breach-worker) or process it hit. */
  target?: string;
  /** The batch the member held when it was hit (null: it held none). */
  batch?: number | null;
  /** The member name the process came back under (the same name resumes its batch). */
  restartedAs?: string;
}

/**
 * How long before a fault a send can have happened whose outcome the fault then kept from
 * being recorded: a delivery is claimed (committed) just before the call and its outcome
 * recorded just after it, well under a second here; the margin is generous.
 */
export const RESEND_WINDOW_BEFORE_MS = 5_000;
export const RESEND_WINDOW_AFTER_MS = 1_000;

/**
 * The faults that can legitimately make an external channel receive one alert twice, each
 * resend carrying the same Message-ID / Idempotency-Key (see delivery-ledger.ts):
 * - a worker killed (SIGKILL) between an email or webhook call and the record of its
 *   outcome, and the PostgreSQL restart failing that record: the claim's lease lapses and
 *   a worker sends again;
 * - a worker stopped (SIGSTOP) with a call in flight: the receiver got the request, but the
 *   call's time-out has expired by the time SIGCONT lets the worker read the answer, so it
 *   records a failure (or its claim lapsed meanwhile) and a worker sends again. That send
 *   happened just before the stop, never during it.
 * A graceful stop (SIGTERM) finishes the alert in hand and causes no resend.
 */
export function resendCause(firstReceivedAt: number, faults: Fault[]): Fault | undefined {
  return faults.find((fault) => {
    if (
      fault.kind !== 'worker-kill' &&
      fault.kind !== 'pg-restart' &&
      fault.kind !== 'worker-stop'
    ) {
      return false;
    }
    const from = fault.at - RESEND_WINDOW_BEFORE_MS;
    const end = fault.kind === 'worker-stop' ? fault.at : (fault.end ?? fault.at);
    return firstReceivedAt >= from && firstReceivedAt <= end + RESEND_WINDOW_AFTER_MS;
  });
}

/**
 * Receipts per key with their times, and the duplicates among them: each duplicate with
 * the fault that explains it, or none (a real duplicate: the suite fails).
 */
export function duplicatesOf(
  receipts: { key: string; at: number }[],
  faults: Fault[],
): {
  keys: Map<string, number[]>;
  duplicates: { key: string; times: number[]; cause: Fault | undefined }[];
} {
  const keys = new Map<string, number[]>();
  for (const receipt of receipts) {
    const times = keys.get(receipt.key) ?? [];
    times.push(receipt.at);
    keys.set(receipt.key, times);
  }
  const duplicates = [...keys.entries()]
    .filter(([, times]) => times.length > 1)
    .map(([key, times]) => {
      const sorted = [...times].sort((a, b) => a - b);
      return { key, times: sorted, cause: resendCause(sorted[0] as number, faults) };
    });
  return { keys, duplicates };
}
