import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { alertTargetsLoad, inAppRecipientsOf } from '../../src/db/alert-targets.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { slaNextInstant } from '../../src/db/sla-deadline.js';
import {
  type EscalationLevelInput,
  escalationLevelsSchema,
} from '../../src/domain/escalation-policy.js';
import { slaAcknowledgedEvent, slaEscalatedEvent } from '../../src/events.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { deactivateAgent, reactivateAgent } from '../../src/services/agents.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import {
  acknowledgeAsActor,
  createEscalationPolicy,
  listTicketEscalations,
  updateEscalationPolicy,
} from '../../src/services/escalations.js';
import { updatePolicy } from '../../src/services/policies.js';
import { createTeam } from '../../src/services/teams.js';
import { addComment } from '../../src/services/ticket-comments.js';
import { transitionTicket } from '../../src/services/ticket-transitions.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { createTicket } from '../../src/services/tickets.js';
import { TestClock } from '../http/app-fixture.js';
import { soleEscalatingPolicy } from '../support/escalating-policy.js';
import { agentInsert, publishedEvents } from '../support/fixtures.js';

const minute = 60_000;
const levels = (input: EscalationLevelInput[]) => escalationLevelsSchema.parse(input);
const admin: Actor = { role: 'admin', name: 'admin', agentId: null, tokenId: null };

/**
 * Escalation chains with an injected clock: every check runs at an instant the test
 * chooses (check_sla_breaches takes `now`), so each level is shown to fire exactly at the
 * breach plus its delay, not a moment earlier, and once. Delivery is the workers' part
 * (escalation-processes.test.ts); here the published ticket.sla_escalated events count.
 */
describe('escalation chains', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 6);
  afterAll(() => pool.end());
  const clock = new TestClock(new Date('2026-03-02T09:00:00Z'));
  const ctx: ServiceContext = { pool, now: clock.now, warningShare: 1 };

  const assignee = await agentInsert(pool, 'Ana Assignee');
  const lead = await agentInsert(pool, 'Luis Lead');
  const member = await agentInsert(pool, 'Marta Member');
  const manager = await agentInsert(pool, 'Nuno Manager');
  const assigneeActor: Actor = {
    role: 'agent',
    name: 'Ana Assignee',
    agentId: assignee,
    tokenId: null,
  };
  const team = await createTeam(ctx, {
    name: 'Support',
    member_ids: [assignee, lead, member],
    lead_agent_id: lead,
  });
  const escalation = await createEscalationPolicy(ctx, {
    name: 'climb',
    levels: levels([
      { delay_minutes: 0, targets: { assignee: true } },
      { delay_minutes: 30, targets: { team_lead: true } },
      {
        delay_minutes: 120,
        targets: { agents: [manager], channels: { email: ['oncall@example.test'] } },
      },
    ]),
  });
  const sla = await soleEscalatingPolicy(ctx, escalation.id, { in_app: true });

  const newTicket = async () => {
    const ticket = await createTicket(ctx, admin, {
      subject: 'Mail server down',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
      assignee_id: assignee,
      team_id: team.id,
    });
    const due = ticket.clocks.find((c) => c.kind === 'first_response')?.due_at as Date;
    return { id: ticket.id, due };
  };
  const at = (due: Date, minutes: number, seconds = 0) =>
    new Date(due.getTime() + minutes * minute + seconds * 1000);
  const check = (now: Date) => checkSlaBreaches(pool, now);
  const firingsOf = async (ticketId: number) =>
    (
      await pool.query(
        'select level, fire_at, fired_at, agents from stega.escalation_firings where ticket_id = $1 order by level',
        [ticketId],
      )
    ).rows as { level: number; fire_at: Date; fired_at: Date; agents: { id: number }[] }[];
  const eventsOf = async (ticketId: number) =>
    (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_escalated'))
      .map((e) => slaEscalatedEvent.parse(e))
      .filter((e) => e.ticket_id === ticketId);

  it('climbs level by level at the set delays, each level once, to its targets', async () => {
    clock.set('2026-03-02T09:00:00Z');
    const ticket = await newTicket();
    expect((await check(at(ticket.due, 0, -1))).escalations).toBe(0);
    expect(await firingsOf(ticket.id)).toEqual([]);

    // the breach and level 0 in the same run
    const first = await check(ticket.due);
    expect(first).toMatchObject({ breaches: 1, escalations: 1 });
    // the deadline job is armed for level 1 exactly
    expect(await slaNextInstant(pool, ticket.due)).toEqual(at(ticket.due, 30));
    expect((await check(at(ticket.due, 29, 59))).escalations).toBe(0);
    expect((await check(at(ticket.due, 30))).escalations).toBe(1);
    expect((await check(at(ticket.due, 30))).escalations).toBe(0);
    expect((await check(at(ticket.due, 119, 59))).escalations).toBe(0);
    expect((await check(at(ticket.due, 120))).escalations).toBe(1);
    expect((await check(at(ticket.due, 24 * 60))).escalations).toBe(0);

    const firings = await firingsOf(ticket.id);
    expect(firings.map((f) => [f.level, f.fire_at.getTime(), f.fired_at.getTime()])).toEqual([
      [0, ticket.due.getTime(), ticket.due.getTime()],
      [1, at(ticket.due, 30).getTime(), at(ticket.due, 30).getTime()],
      [2, at(ticket.due, 120).getTime(), at(ticket.due, 120).getTime()],
    ]);
    expect(firings.map((f) => f.agents.map((a) => a.id))).toEqual([[assignee], [lead], [manager]]);
    const events = await eventsOf(ticket.id);
    expect(events.map((e) => e.level)).toEqual([0, 1, 2]);
    expect(events[2]).toMatchObject({ levels: 3, delay_minutes: 120, kind: 'first_response' });

    const [chain] = await listTicketEscalations(ctx, ticket.id);
    expect(chain).toMatchObject({ state: 'complete', stopped_at: null, next_at: null });
    expect(chain?.levels.map((l) => l.fired_at?.getTime())).toEqual([
      ticket.due.getTime(),
      at(ticket.due, 30).getTime(),
      at(ticket.due, 120).getTime(),
    ]);
    // each level's firing is in the ticket's activity, with whom it alerted
    const { rows: fired } = await pool.query(
      `select at, details from stega.ticket_activity
        where ticket_id = $1 and action = 'escalation_level_fired' order by id`,
      [ticket.id],
    );
    expect(fired.map((r) => [r.at.getTime(), r.details.level, r.details.levels])).toEqual([
      [ticket.due.getTime(), 0, 3],
      [at(ticket.due, 30).getTime(), 1, 3],
      [at(ticket.due, 120).getTime(), 2, 3],
    ]);
    expect(fired.every((r) => r.details.kind === 'first_response')).toBe(true);
    expect(fired.map((r) => r.details.agent_names.length)).toEqual([1, 1, 1]);
  });

  it('stops at acknowledgement: no later level fires; who and when are on the ticket', async () => {
    clock.set('2026-03-03T09:00:00Z');
    const ticket = await newTicket();
    await check(ticket.due);
    const [running] = await listTicketEscalations(ctx, ticket.id);
    expect(running?.state).toBe('running');

    clock.set(at(ticket.due, 10));
    const ack = await acknowledgeAsActor(ctx, running?.id as number, assigneeActor, 'app');
    expect(ack.changed).toBe(true);
    expect(ack.escalation).toMatchObject({
      state: 'stopped',
      stop_reason: 'acknowledged',
      acknowledged_by: 'Ana Assignee',
      acknowledged_by_agent_id: assignee,
      acknowledged_via: 'app',
    });
    expect(ack.escalation.acknowledged_at?.getTime()).toBe(at(ticket.due, 10).getTime());
    // a second acknowledgement changes nothing
    expect((await acknowledgeAsActor(ctx, running?.id as number, admin, 'api')).changed).toBe(
      false,
    );

    expect((await check(at(ticket.due, 30))).escalations).toBe(0);
    expect((await check(at(ticket.due, 600))).escalations).toBe(0);
    expect((await firingsOf(ticket.id)).map((f) => f.level)).toEqual([0]);

    const detail = await getTicket(ctx, ticket.id);
    const entry = detail.activity.find((a) => a.action === 'escalation_acknowledged');
    expect(entry).toMatchObject({
      actor: 'Ana Assignee',
      details: { via: 'app', kind: 'first_response' },
    });
    expect(entry?.at.getTime()).toBe(at(ticket.due, 10).getTime());
    const mirrored = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_acknowledged'))
      .map((e) => slaAcknowledgedEvent.parse(e))
      .filter((e) => e.ticket_id === ticket.id);
    expect(mirrored).toHaveLength(1);
    expect(mirrored[0]).toMatchObject({ via: 'app', acknowledged_by: { agent_id: assignee } });
  });

  it('stops at resolution and when the first reply is sent (the SLA met)', async () => {
    clock.set('2026-03-04T09:00:00Z');
    const resolved = await newTicket();
    const answered = await newTicket();
    await check(resolved.due);
    expect((await firingsOf(answered.id)).map((f) => f.level)).toEqual([0]);

    clock.set(at(resolved.due, 5));
    await transitionTicket(ctx, admin, resolved.id, 'resolved');
    await addComment(ctx, assigneeActor, answered.id, { body: 'Looking into it now.' });
    const [r] = await listTicketEscalations(ctx, resolved.id);
    const [a] = await listTicketEscalations(ctx, answered.id);
    expect(r).toMatchObject({ state: 'stopped', stop_reason: 'resolved' });
    expect(a).toMatchObject({ state: 'stopped', stop_reason: 'sla_met' });

    expect((await check(at(resolved.due, 30))).escalations).toBe(0);
    expect((await check(at(resolved.due, 600))).escalations).toBe(0);
    expect((await firingsOf(resolved.id)).map((f) => f.level)).toEqual([0]);
    expect((await firingsOf(answered.id)).map((f) => f.level)).toEqual([0]);
  });

  it('runs the levels in force when the chain started: an edit mid-chain changes only later breaches', async () => {
    clock.set('2026-03-05T09:00:00Z');
    const policy = await createEscalationPolicy(ctx, {
      name: 'edited',
      levels: levels([
        { delay_minutes: 0, targets: { assignee: true } },
        { delay_minutes: 30, targets: { team_lead: true } },
      ]),
    });
    await updatePolicy(ctx, sla.id, { escalation_policy_id: policy.id });
    try {
      const ticket = await newTicket();
      await check(ticket.due);
      await updateEscalationPolicy(ctx, policy.id, {
        levels: levels([
          { delay_minutes: 0, targets: { assignee: true } },
          { delay_minutes: 5, targets: { agents: [manager] } },
          { delay_minutes: 10, targets: { team: true } },
        ]),
      });
      expect((await check(at(ticket.due, 5))).escalations).toBe(0);
      expect((await check(at(ticket.due, 10))).escalations).toBe(0);
      expect((await check(at(ticket.due, 30))).escalations).toBe(1);
      expect((await check(at(ticket.due, 600))).escalations).toBe(0);
      const firings = await firingsOf(ticket.id);
      expect(firings.map((f) => [f.level, f.agents.map((x) => x.id)])).toEqual([
        [0, [assignee]],
        [1, [lead]],
      ]);

      // a breach after the edit climbs the new levels
      clock.set(at(ticket.due, 601));
      const later = await newTicket();
      await check(later.due);
      await check(at(later.due, 10));
      expect((await firingsOf(later.id)).map((f) => [f.level, f.fire_at.getTime()])).toEqual([
        [0, later.due.getTime()],
        [1, at(later.due, 5).getTime()],
        [2, at(later.due, 10).getTime()],
      ]);
      expect((await firingsOf(later.id))[2]?.agents.map((x) => x.id).sort()).toEqual(
        [assignee, lead, member].sort(),
      );
    } finally {
      await updatePolicy(ctx, sla.id, { escalation_policy_id: escalation.id });
    }
  });

  it('catches up after downtime, and overlapping runs fire each level once', async () => {
    clock.set('2026-03-06T09:00:00Z');
    const tickets = [await newTicket(), await newTicket(), await newTicket()];
    const due = tickets[0]?.due as Date;
    const late = at(due, 180);
    const poolB = createPool(db.url, 3);
    try {
      const [a, b] = await Promise.all([check(late), checkSlaBreaches(poolB, late)]);
      expect(a.breaches + b.breaches).toBe(3);
      expect(a.escalations + b.escalations).toBe(9);
    } finally {
      await poolB.end();
    }
    for (const ticket of tickets) {
      expect((await firingsOf(ticket.id)).map((f) => f.level)).toEqual([0, 1, 2]);
      expect((await eventsOf(ticket.id)).map((e) => e.level).sort()).toEqual([0, 1, 2]);
    }
  });

  it('a policy without an escalation policy alerts as before: no chain', async () => {
    await updatePolicy(ctx, sla.id, { escalation_policy_id: null });
    try {
      clock.set('2026-03-07T09:00:00Z');
      const ticket = await newTicket();
      expect(await check(ticket.due)).toMatchObject({ breaches: 1, escalations: 0 });
      expect(await listTicketEscalations(ctx, ticket.id)).toEqual([]);
    } finally {
      await updatePolicy(ctx, sla.id, { escalation_policy_id: escalation.id });
    }
  });
  it('leaves a deactivated agent out of every target: the level, the team, the assignee', async () => {
    clock.set('2026-03-05T09:00:00Z');
    const ticket = await newTicket();
    await check(ticket.due); // the breach and level 0 (the assignee, still active)
    await deactivateAgent(ctx, lead);
    await deactivateAgent(ctx, manager);
    await deactivateAgent(ctx, assignee);
    try {
      await check(at(ticket.due, 30)); // level 1: the team lead, gone
      await check(at(ticket.due, 120)); // level 2: the manager, gone; its email channel stays
      expect((await firingsOf(ticket.id)).map((f) => f.agents.map((a) => a.id))).toEqual([
        [assignee],
        [],
        [],
      ]);
      // a breach alert of a ticket assigned to someone who left goes to the active team members
      const targets = await alertTargetsLoad(pool, ticket.id);
      expect(targets).toMatchObject({ assigneeId: null, assigneeEmail: null, teamLeadEmail: null });
      expect(inAppRecipientsOf(targets as NonNullable<typeof targets>)).toEqual([
        { recipient: `agent:${member}`, agentId: member },
      ]);
    } finally {
      for (const id of [lead, manager, assignee]) await reactivateAgent(ctx, id);
    }
  });
});
