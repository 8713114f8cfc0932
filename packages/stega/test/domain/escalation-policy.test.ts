import { describe, expect, it } from 'vitest';
import { escalationLevelsSchema, storedLevelsOf } from '../../src/domain/escalation-policy.js';

describe('escalation levels', () => {
  it('fills defaults and keeps any alert channel type the policy schema knows', () => {
    const [level] = escalationLevelsSchema.parse([
      { delay_minutes: 0, targets: { assignee: true, channels: { email: ['a@example.test'] } } },
    ]);
    expect(level).toMatchObject({
      delay_minutes: 0,
      targets: { assignee: true, team: false, team_lead: false, agents: [] },
    });
    expect(level?.targets.channels.email).toEqual(['a@example.test']);
    expect(level?.targets.channels.webhooks).toEqual([]);
  });

  it('refuses delays out of order, levels without a target, in-app and fallback on a level', () => {
    const result = escalationLevelsSchema.safeParse([
      { delay_minutes: 30, targets: { assignee: true } },
      { delay_minutes: 30, targets: { team: true } },
      { delay_minutes: 60, targets: {} },
      { delay_minutes: 90, targets: { channels: { in_app: true } } },
    ]);
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((i) => i.path.join('.')) ?? [];
    expect(paths).toContain('1.delay_minutes');
    expect(paths).toContain('2.targets');
    expect(paths.some((p) => p.startsWith('3.targets.channels'))).toBe(true);
    expect(escalationLevelsSchema.safeParse([]).success).toBe(false);
    // one minute is a minute, not "1 minutes"
    const one = escalationLevelsSchema.safeParse([
      { delay_minutes: 1, targets: { assignee: true } },
      { delay_minutes: 1, targets: { team: true } },
    ]);
    expect(one.error?.issues.map((i) => i.message)).toEqual([
      'must be later than level 0 (1 minute)',
    ]);
    expect(
      escalationLevelsSchema.safeParse([{ delay_minutes: 1.5, targets: { assignee: true } }])
        .success,
    ).toBe(false);
  });

  it('reads a stored snapshot leniently: a level whose channels no longer parse keeps its delay and agents', () => {
    const levels = storedLevelsOf([
      { delay_minutes: 0, targets: { assignee: true } },
      { delay_minutes: 30, targets: { team_lead: true, channels: { carrier_pigeon: ['x'] } } },
    ]);
    expect(levels.map((l) => l.delay_minutes)).toEqual([0, 30]);
    expect(levels[1]?.targets).toMatchObject({ team_lead: true, assignee: false });
    expect(levels[1]?.targets.channels.webhooks).toEqual([]);
    expect(storedLevelsOf(null)).toEqual([]);
  });
});
