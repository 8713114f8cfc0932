import type { ReactNode } from 'react';

/** A horizontally scrollable, keyboard-focusable region around a wide table. */
export function TableRegion({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** A titled section of a page: its heading labels the landmark. */
export function Section({
  id,
  title,
  actions,
  children,
}: {
  id: string;
  title: string;
  actions?: ReactNode;
  children: ReactNode;
}) {
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
