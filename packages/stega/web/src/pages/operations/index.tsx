import { useQuery } from '@tanstack/react-query';
import { Freshness, LoadState } from '../../components/layout.js';
import { keys, pathQuery } from '../../data/queries.js';
import { useTitle } from '../../hooks/use-title.js';
import type { Queue } from '../../types.js';
import { DeadLetterSection } from './dead-letters.js';
import { DeliveryChart, OutstandingSection } from './deliveries.js';
import { JobSection } from './jobs.js';
import { MailQuarantineSection } from './mail-quarantine.js';
import { QueueSection } from './queues.js';
import { TakeoverSection } from './takeovers.js';

/** The pipeline, live: queues, consumers and replicas, takeovers, deliveries, dead letters, jobs. */
export function OperationsPage() {
  useTitle('Operations');
  const queues = useQuery({
    ...pathQuery<{ items: Queue[] }>(keys.operations, '/api/queues'),
    refetchInterval: 2000,
  });
  const items = queues.data?.items ?? [];
  const groups = items.flatMap((q) =>
    q.consumers
      .filter((c) => c.subconsumers.length > 0)
      .map((c) => ({ queue: q.queue_name, consumer: c.name })),
  );
  return (
    <div className="page">
      <div className="page-head">
        <h1>Operations</h1>
        <Freshness updatedAt={queues.dataUpdatedAt} />
      </div>
      <LoadState loading={queues.isPending} error={queues.error} empty={!queues.data} />
      {items.map((queue) => (
        <QueueSection key={queue.queue_name} queue={queue} />
      ))}
      {groups.map((g) => (
        <TakeoverSection key={`${g.queue}/${g.consumer}`} queue={g.queue} consumer={g.consumer} />
      ))}
      <DeliveryChart />
      <OutstandingSection />
      {items.map((queue) => (
        <DeadLetterSection key={queue.queue_name} queue={queue.queue_name} />
      ))}
      <MailQuarantineSection />
      <JobSection />
    </div>
  );
}
