import type { Queryable } from '@stega/pgque';

/** A round-the-clock calendar; returns its id. */
export async function calendarInsert24x7(
  db: Queryable,
  name = `always-${Math.random().toString(36).slice(2)}`,
) {
  const { rows } = await db.query(
    `insert into stega.calendars (name, time_zone, always_open) values ($1, 'UTC', true) returning id`,
    [name],
  );
  return Number(rows[0]?.id);
}

export async function agentInsert(db: Queryable, name: string) {
  const { rows } = await db.query(
    'insert into stega.agents (name, email) values ($1, $2) returning id',
    [
      name,
      `${name.toLowerCase().replace(/\W+/g, '.')}.${Math.random().toString(36).slice(2, 8)}@example.test`,
    ],
  );
  return Number(rows[0]?.id);
}

/**
 * A ticket with running first-response and resolution clocks, written straight into the
 * tables (the SLA arithmetic itself is tested in the domain tests).
 */
export async function ticketInsertWithClocks(
  db: Queryable,
  options: {
    calendarId: number;
    startedAt: Date;
    firstResponseDue: Date;
    resolutionDue: Date;
    warnShare?: number;
    status?: string;
    assigneeId?: number | null;
  },
) {
  const { rows } = await db.query(
    `insert into stega.tickets (subject, requester_name, requester_email, priority, status, assignee_id, created_at)
     values ('Printer on fire', 'Ana', 'ana@example.test', 'high', $1, $2, $3) returning id`,
    [options.status ?? 'open', options.assigneeId ?? null, options.startedAt],
  );
  const ticketId = Number(rows[0]?.id);
  const share = options.warnShare ?? 0.8;
  for (const [kind, due] of [
    ['first_response', options.firstResponseDue],
    ['resolution', options.resolutionDue],
  ] as const) {
    const warnAt = new Date(
      options.startedAt.getTime() + (due.getTime() - options.startedAt.getTime()) * share,
    );
    await db.query(
      `insert into stega.sla_clocks (ticket_id, kind, calendar_id, started_at, target_minutes, due_at, warn_at,
                                     next_warn_at)
       values ($1, $2, $3, $4, $5, $6::timestamptz, $7::timestamptz,
               case when $7::timestamptz < $6::timestamptz then $7::timestamptz end)`,
      [
        ticketId,
        kind,
        options.calendarId,
        options.startedAt,
        Math.round((due.getTime() - options.startedAt.getTime()) / 60_000),
        due,
        warnAt,
      ],
    );
  }
  return ticketId;
}

/** Every event of `type` published so far, read through a fresh consumer registered at tick 1. */
export async function publishedEvents(
  db: Queryable,
  queue: string,
  type: string,
): Promise<Record<string, unknown>[]> {
  const consumer = `inspect_${Math.random().toString(36).slice(2, 10)}`;
  const first = await db.query(
    'select min(tick_id) as t from pgque.tick k join pgque.queue q on q.queue_id = k.tick_queue where q.queue_name = $1',
    [queue],
  );
  await db.query('select pgque.register_consumer_at($1, $2, $3)', [
    queue,
    consumer,
    first.rows[0]?.t,
  ]);
  await db.query('select pgque.force_next_tick($1)', [queue]);
  await db.query('select pgque.ticker($1)', [queue]);
  const events: Record<string, unknown>[] = [];
  for (;;) {
    const batch = await db.query('select pgque.next_batch($1, $2) as id', [queue, consumer]);
    const id = batch.rows[0]?.id;
    if (id === null || id === undefined) break;
    const { rows } = await db.query('select ev_type, ev_data from pgque.get_batch_events($1)', [
      id,
    ]);
    for (const row of rows) if (row.ev_type === type) events.push(JSON.parse(String(row.ev_data)));
    await db.query('select pgque.finish_batch($1)', [id]);
  }
  await db.query('select pgque.unregister_consumer($1, $2)', [queue, consumer]);
  return events;
}

/** The body of a received mail, quoted-printable decoded. */
export function mailBodyOf(raw: string): string {
  const body = raw
    .split(/\r?\n\r?\n/)
    .slice(1)
    .join('\n\n');
  return body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
