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
