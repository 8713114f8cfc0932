import { describe, expect, it } from 'vitest';
import { SlaPolicyConflictError } from '../../src/domain/errors.js';
import { resolveSlaPolicy, slaPolicySchema } from '../../src/domain/sla-policy.js';

const policies = [
  {
    id: 'p-urgent',
    priority: 'urgent',
    requester_org: null,
    first_response_minutes: 30,
    resolution_minutes: 240,
    calendar_id: '1',
  },
  {
    id: 'p-urgent-acme',
    priority: 'urgent',
    requester_org: 'acme',
    first_response_minutes: 15,
    resolution_minutes: 120,
    calendar_id: '2',
  },
  {
    id: 'p-normal',
    priority: 'normal',
    requester_org: null,
    first_response_minutes: 240,
    resolution_minutes: 2400,
    calendar_id: '1',
  },
  {
    id: 'p-low-acme',
    priority: 'low',
    requester_org: 'acme',
    first_response_minutes: 480,
    resolution_minutes: 4800,
    calendar_id: '1',
  },
] as const;

describe('resolveSlaPolicy', () => {
  it('orders scopes team + organisation, team, organisation, priority only', () => {
    const scoped = [
      { id: 'any', priority: 'high', requester_org: null, team_id: null },
      { id: 'org', priority: 'high', requester_org: 'acme', team_id: null },
      { id: 'team', priority: 'high', requester_org: null, team_id: 7 },
      { id: 'team-org', priority: 'high', requester_org: 'acme', team_id: 7 },
      { id: 'other-team', priority: 'high', requester_org: null, team_id: 8 },
    ] as const;
    const pick = (subject: { requester_org?: string | null; team_id?: number | null }) =>
      resolveSlaPolicy(scoped, { priority: 'high', ...subject })?.id;
    expect(pick({ requester_org: 'acme', team_id: 7 })).toBe('team-org');
    expect(pick({ requester_org: 'globex', team_id: 7 })).toBe('team');
    expect(pick({ requester_org: null, team_id: 7 })).toBe('team');
    expect(pick({ requester_org: 'acme', team_id: 9 })).toBe('org');
    expect(pick({ requester_org: 'acme', team_id: null })).toBe('org');
    expect(pick({ requester_org: 'globex', team_id: 9 })).toBe('any');
    expect(pick({})).toBe('any');
    // each tier falls through to the next one when it is empty
    const withoutTeamOrg = scoped.filter((p) => p.id !== 'team-org');
    expect(
      resolveSlaPolicy(withoutTeamOrg, { priority: 'high', requester_org: 'acme', team_id: 7 })?.id,
    ).toBe('team');
    const withoutTeams = scoped.filter((p) => p.team_id === null);
    expect(
      resolveSlaPolicy(withoutTeams, { priority: 'high', requester_org: 'acme', team_id: 7 })?.id,
    ).toBe('org');
    // a team's policy never applies to a ticket of another team or of none
    const onlyTeam = scoped.filter((p) => p.id === 'other-team');
    expect(resolveSlaPolicy(onlyTeam, { priority: 'high', team_id: 7 })).toBeUndefined();
    expect(resolveSlaPolicy(onlyTeam, { priority: 'high' })).toBeUndefined();
  });

  it('prefers the policy for the requester organisation', () => {
    expect(resolveSlaPolicy(policies, { priority: 'urgent', requester_org: 'acme' })?.id).toBe(
      'p-urgent-acme',
    );
  });

  it('falls back to the organisation-agnostic policy of the priority', () => {
    expect(resolveSlaPolicy(policies, { priority: 'urgent', requester_org: 'globex' })?.id).toBe(
      'p-urgent',
    );
    expect(resolveSlaPolicy(policies, { priority: 'urgent' })?.id).toBe('p-urgent');
    expect(resolveSlaPolicy(policies, { priority: 'normal', requester_org: 'acme' })?.id).toBe(
      'p-normal',
    );
  });

  it('never uses another organisation or another priority', () => {
    expect(
      resolveSlaPolicy(policies, { priority: 'low', requester_org: 'globex' }),
    ).toBeUndefined();
    expect(resolveSlaPolicy(policies, { priority: 'low', requester_org: null })).toBeUndefined();
    expect(resolveSlaPolicy(policies, { priority: 'high', requester_org: 'acme' })).toBeUndefined();
  });

  it('refuses to choose between equally specific policies', () => {
    const twice = [...policies, { ...policies[1], id: 'p-urgent-acme-2' }];
    expect(() => resolveSlaPolicy(twice, { priority: 'urgent', requester_org: 'acme' })).toThrow(
      SlaPolicyConflictError,
    );
    // The duplicate does not matter to other organisations.
    expect(resolveSlaPolicy(twice, { priority: 'urgent', requester_org: 'globex' })?.id).toBe(
      'p-urgent',
    );
  });
});

describe('slaPolicySchema', () => {
  it('accepts a policy and defaults the organisation to any', () => {
    expect(
      slaPolicySchema.parse({
        priority: 'high',
        first_response_minutes: 60,
        resolution_minutes: 480,
        calendar_id: 7,
      }),
    ).toEqual({
      priority: 'high',
      requester_org: null,
      first_response_minutes: 60,
      resolution_minutes: 480,
      calendar_id: '7',
    });
  });

  it('names every failing field', () => {
    const result = slaPolicySchema.safeParse({
      priority: 'critical',
      first_response_minutes: 0,
      resolution_minutes: 1.5,
      calendar_id: 'office',
    });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((issue) => issue.path.join('.')).sort();
    expect(paths).toEqual([
      'calendar_id',
      'first_response_minutes',
      'priority',
      'resolution_minutes',
    ]);
  });
});
