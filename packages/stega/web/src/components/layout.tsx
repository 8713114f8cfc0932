import { type ReactNode, useState } from 'react';

/** A horizontally scrollable, keyboard-focusable region around a wide table. */
export function TableRegion({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** The width under which the page lays out for a phone (styles.css's narrow screens). */
const NARROW = '(max-width: 760px)';

/** Whether the window is a phone's width now (read once, when a section first shows). */
function isNarrow(): boolean {
  return typeof window !== 'undefined' && window.matchMedia?.(NARROW).matches === true;
}

/**
 * A titled section of a page: its heading labels the landmark. `fold`: a side panel, folded
 * behind its heading (a disclosure) on a phone's width and open on wider screens; the reader
 * opens or closes it with the heading.
 */
export function Section({
  id,
  title,
  actions,
  children,
  fold = false,
}: {
  id: string;
  title: string;
  actions?: ReactNode;
  children: ReactNode;
  fold?: boolean;
}) {
  const [open, setOpen] = useState(() => !isNarrow());
  if (fold) {
    return (
      <section className="panel folding" aria-labelledby={`${id}-title`}>
        <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
          <summary className="panel-head">
            <h2 id={`${id}-title`}>{title}</h2>
          </summary>
          {actions ? <div className="panel-actions">{actions}</div> : null}
          {children}
        </details>
      </section>
    );
  }
  return (
    <section className="panel" aria-labelledby={`${id}-title`}>
      <div className="panel-head">
        <h2 id={`${id}-title`}>{title}</h2>
        {actions ? <div className="panel-actions">{actions}</div> : null}
      </div>
      {children}
    </section>
  );
}

/** Loading, error and empty states in one place. */
export function LoadState({
  loading,
  error,
  empty,
  emptyText,
}: {
  loading: boolean;
  error: Error | null | undefined;
  empty?: boolean;
  emptyText?: string;
}) {
  if (error) {
    return (
      <p className="notice error" role="alert">
        {error.message}
      </p>
    );
  }
  if (loading && empty) return <p className="muted">Loading…</p>;
  if (empty && emptyText) return <p className="muted">{emptyText}</p>;
  return null;
}

/** When the data on screen was last refreshed (polite, not announced on every poll). */
export function Freshness({ updatedAt }: { updatedAt: number | undefined }) {
  if (!updatedAt) return null;
  return (
    <p className="freshness muted">
      Live · updated{' '}
      {new Date(updatedAt).toLocaleTimeString(undefined, {
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      })}
    </p>
  );
}
