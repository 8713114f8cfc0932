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
 * How long before a fault a send can have happened whose ledger row the fault then kept
 * from committing: a delivery's transaction is open from just before the send until just
 * after it, well under a second here; the margin is generous.
 */
export const RESEND_WINDOW_BEFORE_MS = 5_000;
export const RESEND_WINDOW_AFTER_MS = 1_000;

/**
 * The faults that can legitimately make an external channel receive one alert twice: a
 * worker killed (SIGKILL) between an email or webhook call and the commit of its ledger row,
 * and the PostgreSQL restart failing that commit. The redelivery finds the row undelivered
 * and sends again, with the same Message-ID / Idempotency-Key (see delivery-ledger.ts).
 * A graceful stop (SIGTERM) finishes the alert in hand, and a stopped (SIGSTOP) worker
 * keeps its ledger row locked, so neither may cause a resend.
 */
export function resendCause(firstReceivedAt: number, faults: Fault[]): Fault | undefined {
  return faults.find((fault) => {
    if (fault.kind !== 'worker-kill' && fault.kind !== 'pg-restart') return false;
    const from = fault.at - RESEND_WINDOW_BEFORE_MS;
    const to = (fault.end ?? fault.at) + RESEND_WINDOW_AFTER_MS;
    return firstReceivedAt >= from && firstReceivedAt <= to;
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
