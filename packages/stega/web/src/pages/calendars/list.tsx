import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { DataTable } from '../../components/data-table.js';
import { LoadState } from '../../components/layout.js';
import { calendarsQuery } from '../../data/queries.js';
import { useTitle } from '../../hooks/use-title.js';
import { type Calendar, WEEKDAYS } from '../../types.js';

/** Business calendars: the hours SLA targets count in. */
export function CalendarsPage({ admin }: { admin: boolean }) {
  useTitle('Calendars');
  const calendars = useQuery({ ...calendarsQuery(), refetchInterval: 15_000 });
  const items = calendars.data?.items ?? [];
  return (
    <div className="page">
      <div className="page-head">
        <h1>Business calendars</h1>
        {admin ? (
          <Link to="/calendars/new" className="button primary">
            New calendar
          </Link>
        ) : null}
      </div>
      <LoadState
        loading={calendars.isPending}
        error={calendars.error}
        empty={items.length === 0}
        emptyText="No calendar yet."
      />
      {items.length > 0 ? (
        <DataTable<Calendar>
          label="Calendars"
          rows={items}
          rowKey={(c) => c.id}
          columns={[
            { header: 'Name', cell: (c) => <Link to={`/calendars/${c.id}`}>{c.name}</Link> },
            { header: 'Time zone', cell: (c) => c.time_zone },
            { header: 'Hours', cell: (c) => (c.always_open ? '24x7' : hoursSummary(c)) },
            {
              header: 'Holidays',
              num: true,
              cell: (c) => (c.always_open ? '—' : c.holidays.length),
            },
          ]}
        />
      ) : null}
    </div>
  );
}

function hoursSummary(c: Calendar): string {
  const days = WEEKDAYS.filter((d) => (c.weekly_hours[d]?.length ?? 0) > 0);
  if (days.length === 0) return 'closed';
  return days
    .map(
      (d) =>
        `${d.slice(0, 3)} ${(c.weekly_hours[d] ?? []).map((i) => `${i.start}–${i.end}`).join(', ')}`,
    )
    .join('; ');
}
