import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api.js';
import { DataTable } from '../../components/data-table.js';
import { LoadState, Section } from '../../components/layout.js';
import { keys, pathQuery } from '../../data/queries.js';
import { formatDateTime } from '../../format.js';
import type { DeadLetter } from '../../types.js';

/** A queue's dead letters, live, each with its payload and a replay button. */
export function DeadLetterSection({ queue }: { queue: string }) {
  const path = `/api/queues/${encodeURIComponent(queue)}/dead-letters`;
  const letters = useQuery({
    ...pathQuery<{ items: DeadLetter[] }>(keys.operations, `${path}?limit=100`),
    refetchInterval: 3000,
  });
  const [status, setStatus] = useState<{ text: string; error?: boolean } | undefined>();
  const [busy, setBusy] = useState<number | undefined>();
  // replayed letters leave the list at once, not at the next poll
  const [replayed, setReplayed] = useState<Set<number>>(() => new Set());
  const replay = async (letter: DeadLetter) => {
    setBusy(letter.id);
    setStatus(undefined);
    try {
      const result = await api<{ dead_letter_id: number; event_id: number }>(
        'POST',
        `/api/dead-letters/${letter.id}/replay`,
      );
      setStatus({
        text: `Dead letter ${result.dead_letter_id} replayed as event ${result.event_id}.`,
      });
      setReplayed((done) => new Set(done).add(letter.id));
      void letters.refetch();
    } catch (error) {
      setStatus({ text: `Replay failed: ${(error as Error).message}`, error: true });
    } finally {
      setBusy(undefined);
    }
  };
  const items = (letters.data?.items ?? []).filter((d) => !replayed.has(d.id));
  return (
    <Section id={`dead-letters-${queue.replace(/\W+/g, '-')}`} title={`Dead letters of ${queue}`}>
      <p role="status" className={status?.error ? 'notice error' : 'notice ok'} hidden={!status}>
        {status?.text}
      </p>
      <LoadState
        loading={letters.isPending}
        error={letters.error}
        empty={items.length === 0}
        emptyText="No dead letters."
      />
      {items.length > 0 ? (
        <DataTable<DeadLetter>
          label={`Dead letters of ${queue}`}
          className="dead-letters"
          rows={items}
          rowKey={(d) => d.id}
          rowProps={(d) => ({ 'data-dead-letter-id': d.id })}
          columns={[
            { header: '#', num: true, cell: (d) => d.id },
            { header: 'Dead since', cell: (d) => formatDateTime(d.dead_at) },
            { header: 'Type', cell: (d) => d.type ?? '—' },
            { header: 'Ticket', cell: (d) => <TicketLink payload={d.payload} /> },
            {
              header: 'Event',
              cell: (d) => (
                <span>
                  {d.event_id}
                  {d.retry_count ? (
                    <span className="muted small"> ({d.retry_count} retries)</span>
                  ) : null}
                </span>
              ),
            },
            {
              header: 'Reason',
              className: 'break',
              cell: (d) => <LongText text={d.reason ?? '—'} />,
            },
            {
              header: 'Payload',
              className: 'payload',
              cell: (d) => (
                <details>
                  <summary>Show</summary>
                  <pre>{prettyJson(d.payload)}</pre>
                </details>
              ),
            },
            {
              header: <span className="visually-hidden">Actions</span>,
              label: null,
              cell: (d) => (
                <button
                  type="button"
                  className="secondary"
                  disabled={busy !== undefined}
                  onClick={() => replay(d)}
                  aria-label={`Replay dead letter ${d.id}`}
                >
                  {busy === d.id ? 'Replaying…' : 'Replay'}
                </button>
              ),
            },
          ]}
        />
      ) : null}
    </Section>
  );
}

/** The ticket a dead event is about, linked, when its payload names one that can exist. */
function TicketLink({ payload }: { payload: string | null }) {
  const id = ticketOf(payload);
  return id ? <Link to={`/tickets/${id}`}>#{id}</Link> : '—';
}

function ticketOf(payload: string | null): number | undefined {
  if (!payload) return undefined;
  try {
    const id = (JSON.parse(payload) as { ticket_id?: unknown }).ticket_id;
    const n = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id;
    return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Long text shows its start; the rest opens on demand. */
function LongText({ text }: { text: string }) {
  if (text.length <= 140) return <span>{text}</span>;
  return (
    <details className="long-text">
      <summary>{text.slice(0, 120)}…</summary>
      <span>{text}</span>
    </details>
  );
}

function prettyJson(text: string | null): string {
  if (text === null) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
