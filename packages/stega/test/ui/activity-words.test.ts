import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { activityText, type Names } from '../../web/src/words.js';

const names: Names = { agent: () => 'Ana', policy: () => 'Standard' };

/** Every way an escalation can be acknowledged, as the database allows them. */
function acknowledgedVias(): string[] {
  const dump = readFileSync(new URL('../../sql/schema.dump', import.meta.url), 'utf8');
  const check = dump.match(/escalations_acknowledged_via_check: CHECK \(\(.*\)\)/)?.[0] ?? '';
  return [...check.matchAll(/'([a-z_]+)'::text/g)].map((m) => m[1] as string);
}

describe("the ticket activity's words for an acknowledgement", () => {
  it('names how it was acknowledged, for every way the database allows', () => {
    const vias = acknowledgedVias();
    expect(vias).toEqual(expect.arrayContaining(['app', 'sms', 'voice', 'slack', 'push']));
    for (const via of vias.filter((v) => v !== 'app')) {
      const text = activityText(
        'escalation_acknowledged',
        { kind: 'first_response', via, last_level_fired: 0 },
        names,
      );
      expect(text, via).toMatch(
        /^acknowledged the first-response escalation \(.+\), after level 0$/,
      );
    }
    expect(
      activityText('escalation_acknowledged', { kind: 'first_response', via: 'push' }, names),
    ).toBe('acknowledged the first-response escalation (push notification)');
  });
});

describe("the ticket activity's words for whoever an on-call target paged", () => {
  it('names the person and the schedule (by its id in entries recorded before names were)', () => {
    const paged = { level: 0, schedule_id: 7, agent_id: 3, agent_name: 'Ana', source: 'layer' };
    expect(activityText('escalation_on_call', { ...paged, schedule_name: 'Nights' }, names)).toBe(
      'paged Ana, on call in schedule “Nights” (level 0)',
    );
    expect(activityText('escalation_on_call', paged, names)).toBe(
      'paged Ana, on call in schedule 7 (level 0)',
    );
    expect(
      activityText(
        'escalation_on_call_fallback',
        { ...paged, schedule_name: 'Middays', via: 'schedule_team_lead', reason: 'gap' },
        names,
      ),
    ).toBe(
      "paged Ana, the schedule team's lead: nobody was on call in schedule “Middays” (level 0)",
    );
  });
});
