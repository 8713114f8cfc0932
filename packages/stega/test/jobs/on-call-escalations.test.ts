import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { createPool } from '../../src/db/pool.js';
import {
  type EscalationLevelInput,
  escalationLevelsSchema,
} from '../../src/domain/escalation-policy.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { deactivateAgent } from '../../src/services/agents.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import { createEscalationPolicy } from '../../src/services/escalations.js';
import { createSchedule, deleteSchedule } from '../../src/services/schedules.js';
import { createTeam } from '../../src/services/teams.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { createTicket } from '../../src/services/tickets.js';
import { TestClock } from '../http/app-fixture.js';
import { soleEscalatingPolicy } from '../support/escalating-policy.js';
import { agentInsert } from '../support/fixtures.js';

const minute = 60_000;
const admin: Actor = { role: 'admin', name: 'admin', agentId: null, tokenId: null };

/**
 * The escalation target "on call in schedule X", resolved when the level fires (the injected
 * `now` of check_sla_breaches): the person on call then, or in a gap the level's fallback
 * agent, else the schedule team's lead; the ticket's activity says who and why.
 */
describe('escalation levels that target whoever is on call', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 6);
  afterAll(() => pool.end());
  const clock = new TestClock(new Date('2026-03-10T02:00:00Z'));
  const ctx: ServiceContext = { pool, now: clock.now, warningShare: 1 };

  const nora = await agentInsert(pool, 'Nora Night');
  const lead = await agentInsert(pool, 'Luis Lead');
  const backup = await agentInsert(pool, 'Bia Backup');
  const team = await createTeam(ctx, {
    name: 'Ops',
    member_ids: [nora, lead, backup],
    lead_agent_id: lead,
  });
  // Nora covers the nights, 20:00-08:00 in Lisbon (WET, UTC+0, on 10 March); days are a gap
  const schedule = await createSchedule(
    ctx,
    {
      name: 'Nights',
      time_zone: 'Europe/Lisbon',
      team_id: team.id,
      layers: [
        {
          participant_ids: [nora],
          shift_length: 1,
          shift_unit: 'weeks',
          handoff_time: '00:00',
          start_date: '2026-03-02',
          restrictions: [
            {
              days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
              start: '20:00',
              end: '08:00',
            },
          ],
        },
      ],
    },
    admin,
  );
  const levels: EscalationLevelInput[] = [
    { delay_minutes: 0, targets: { on_call: [{ schedule_id: schedule.id }] } },
    {
      delay_minutes: 30,
      targets: { on_call: [{ schedule_id: schedule.id, fallback_agent_id: backup }] },
    },
  ];
  const escalation = await createEscalationPolicy(ctx, {
    name: 'page the on-call',
    levels: escalationLevelsSchema.parse(levels),
  });
  await soleEscalatingPolicy(ctx, escalation.id, { in_app: true });

  /** A ticket of team Ops whose first response is due an hour after `createdAt`. */
  const ticketAt = async (createdAt: string) => {
    clock.set(createdAt);
    const ticket = await createTicket(ctx, admin, {
      subject: 'Database down',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
      team_id: team.id,
    });
    const due = ticket.clocks.find((c) => c.kind === 'first_response')?.due_at as Date;
    return { id: ticket.id, due };
  };
  const firedAgents = async (ticketId: number) =>
    (
      await pool.query(
        'select level, agents from stega.escalation_firings where ticket_id = $1 order by level',
        [ticketId],
      )
    ).rows.map((row) => (row.agents as { id: number }[]).map((a) => Number(a.id)));
  const onCallActivity = async (ticketId: number) =>
    (await getTicket(ctx, ticketId)).activity
      .filter((a) => a.action.startsWith('escalation_on_call'))
      .map((a) => ({ action: a.action, ...a.details }));

  it('pages the person on call at 03:00, as the schedule says then', async () => {
    const ticket = await ticketAt('2026-03-10T02:00:00Z');
    expect(ticket.due.toISOString()).toBe('2026-03-10T03:00:00.000Z');
    expect((await checkSlaBreaches(pool, ticket.due)).escalations).toBe(1);
    expect(await firedAgents(ticket.id)).toEqual([[nora]]);
    expect(await onCallActivity(ticket.id)).toEqual([
      expect.objectContaining({
        action: 'escalation_on_call',
        level: 0,
        schedule_id: schedule.id,
        agent_id: nora,
        agent_name: 'Nora Night',
        via: 'schedule',
        reason: null,
        source: 'layer',
      }),
    ]);
  });

  it('in a gap pages the schedule team’s lead, then the level’s fallback, and says why', async () => {
    const ticket = await ticketAt('2026-03-10T11:00:00Z');
    await checkSlaBreaches(pool, ticket.due);
    await checkSlaBreaches(pool, new Date(ticket.due.getTime() + 30 * minute));
    expect(await firedAgents(ticket.id)).toEqual([[lead], [backup]]);
    expect(await onCallActivity(ticket.id)).toEqual([
      expect.objectContaining({
        action: 'escalation_on_call_fallback',
        level: 0,
        agent_id: lead,
        via: 'schedule_team_lead',
        reason: 'gap',
      }),
      expect.objectContaining({
        action: 'escalation_on_call_fallback',
        level: 1,
        agent_id: backup,
        via: 'level_fallback',
        reason: 'gap',
      }),
    ]);
  });

  it('resolves at the instant the level fires, not when the chain started', async () => {
    // breach at 19:45 (a gap: the lead); level 1 fires at 20:15, inside Nora's night
    const ticket = await ticketAt('2026-03-11T18:45:00Z');
    await checkSlaBreaches(pool, ticket.due);
    await checkSlaBreaches(pool, new Date(ticket.due.getTime() + 30 * minute));
    expect(await firedAgents(ticket.id)).toEqual([[lead], [nora]]);
  });

  it('never pages a deactivated agent: their shift is a gap and falls back', async () => {
    await deactivateAgent(ctx, nora);
    const ticket = await ticketAt('2026-03-12T01:00:00Z');
    await checkSlaBreaches(pool, ticket.due);
    expect(await firedAgents(ticket.id)).toEqual([[lead]]);
    expect(await onCallActivity(ticket.id)).toEqual([
      expect.objectContaining({ via: 'schedule_team_lead', reason: 'gap', agent_id: lead }),
    ]);
  });

  it('refuses to delete a schedule an escalation policy targets, and a target of no schedule', async () => {
    await expect(deleteSchedule(ctx, schedule.id, admin)).rejects.toMatchObject({ status: 409 });
    await expect(
      createEscalationPolicy(ctx, {
        name: 'nowhere',
        levels: escalationLevelsSchema.parse([
          { delay_minutes: 0, targets: { on_call: [{ schedule_id: 987654 }] } },
        ]),
      }),
    ).rejects.toMatchObject({
      status: 400,
      issues: [
        { path: 'levels[0].targets.on_call[0].schedule_id', message: 'no schedule with id 987654' },
      ],
    });
  });
});
