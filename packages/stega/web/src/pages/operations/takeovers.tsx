import { useQuery } from '@tanstack/react-query';
import { DataTable } from '../../components/data-table.js';
import { LoadState, Section } from '../../components/layout.js';
import { keys, pathQuery } from '../../data/queries.js';
import { formatDateTime } from '../../format.js';
import type { Takeovers } from '../../types.js';

type Takeover = Takeovers['items'][number];

/** The takeovers in one cooperative consumer: who lost a batch to whom, live. */
export function TakeoverSection({ queue, consumer }: { queue: string; consumer: string }) {
  const path = `/api/queues/${encodeURIComponent(queue)}/consumers/${encodeURIComponent(consumer)}/takeovers`;
  const takeovers = useQuery({
    ...pathQuery<Takeovers>(keys.operations, `${path}?limit=50`),
    refetchInterval: 3000,
  });
  const data = takeovers.data;
  return (
    <Section id={`takeovers-${consumer}`} title={`Takeovers in ${consumer}`}>
      <p className="muted small">
        A member that stops sending heartbeats while it holds a batch loses it to another member
        after the dead interval.
      </p>
      <LoadState loading={takeovers.isPending} error={takeovers.error} empty={!data} />
      {data && data.items.length === 0 ? <p className="muted">No takeover recorded.</p> : null}
      {data && data.items.length > 0 ? (
        <DataTable<Takeover>
          label={`Takeovers in ${consumer}`}
          className="takeovers"
          rows={data.items}
          rowKey={(t) => `${t.taken_at}:${t.old_subconsumer}:${t.new_batch_id}`}
          rowProps={(t) => ({
            'data-old-subconsumer': t.old_subconsumer,
            'data-new-subconsumer': t.new_subconsumer,
          })}
          columns={[
            { header: 'When', cell: (t) => formatDateTime(t.taken_at) },
            { header: 'From replica', className: 'replica', cell: (t) => t.old_subconsumer },
            { header: 'To replica', className: 'replica', cell: (t) => t.new_subconsumer },
            {
              header: 'Batch',
              cell: (t) => (
                <span>
                  {t.old_batch_id ?? '—'} → {t.new_batch_id ?? '—'}
                </span>
              ),
            },
          ]}
        />
      ) : null}
    </Section>
  );
}
