import { label } from '../format.js';
import type { Priority, TicketStatus } from '../types.js';

export function StatusBadge({ status }: { status: TicketStatus }) {
  return <span className={`badge status-${status}`}>{label(status)}</span>;
}

export function PriorityBadge({ priority }: { priority: Priority }) {
  return <span className={`badge priority-${priority}`}>{label(priority)}</span>;
}

/** Breached wins over warned; nothing when the SLA is on track. */
export function SlaBadge({ breached, warned }: { breached: boolean; warned: boolean }) {
  if (breached) return <span className="badge sla-breached">Breached</span>;
  if (warned) return <span className="badge sla-warned">Warned</span>;
  return null;
}

/** A delivery's status and, when it has one, the error of its last attempt. */
export function DeliveryOutcome({
  status,
  lastError,
}: {
  status: 'pending' | 'delivered' | 'failed';
  lastError: string | null | undefined;
}) {
  return (
    <div>
      <DeliveryBadge status={status} />
      {lastError ? <span className="small error-text"> {lastError}</span> : null}
    </div>
  );
}

/** A delivery's status: delivered, pending or failed. */
export function DeliveryBadge({ status }: { status: 'pending' | 'delivered' | 'failed' }) {
  return <span className={`badge delivery-${status}`}>{label(status)}</span>;
}
