// The slot plan each PartitionedConsumer worker follows, on its own: shares that add up to
// the slot count, and rounds that converge to a balanced, disjoint assignment that moves
// as few slots as it must when a worker joins or leaves.
import { describe, expect, it } from 'vitest';
import { planSlots, slotShare } from '../../src/slot-assignment.js';

/** Rounds of every worker planning from the same facts, until nothing moves. */
function settle(slots: number, live: string[], owners: Map<number, string>): Map<number, string> {
  for (let round = 0; round < 20; round++) {
    let moved = false;
    for (const me of live) {
      const held = new Set([...owners].filter(([, o]) => o === me).map(([s]) => s));
      const free = Array.from({ length: slots }, (_, s) => s).filter((s) => !owners.has(s));
      const plan = planSlots({ slots, me, live, held, free });
      for (const slot of plan.release) {
        owners.delete(slot);
        moved = true;
      }
      for (const slot of plan.claim) {
        if (held.size >= plan.share) break;
        if (owners.has(slot)) continue; // another worker won the race
        owners.set(slot, me);
        held.add(slot);
        moved = true;
      }
    }
    if (!moved) return owners;
  }
  throw new Error('did not settle');
}

describe('slot plan', () => {
  it('gives each worker an equal share, the first ones one more', () => {
    for (const [slots, workers] of [
      [8, 3],
      [64, 5],
      [4, 4],
      [3, 5],
    ] as const) {
      const live = Array.from({ length: workers }, (_, i) => `w${i}`);
      const shares = live.map((w) => slotShare(live, w, slots));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(slots);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    }
  });

  it('converges to a balanced assignment and moves only what a join or a leave needs', () => {
    const slots = 16;
    let owners = settle(slots, ['a'], new Map());
    expect(owners.size).toBe(16);
    owners = settle(slots, ['a', 'b', 'c'], owners);
    const count = (who: string) => [...owners.values()].filter((o) => o === who).length;
    expect([count('a'), count('b'), count('c')]).toEqual([6, 5, 5]);
    const before = new Map(owners);
    owners = settle(slots, ['a', 'b', 'c', 'd'], owners);
    expect([count('a'), count('b'), count('c'), count('d')]).toEqual([4, 4, 4, 4]);
    const moved = [...owners].filter(([slot, o]) => before.get(slot) !== o).length;
    expect(moved).toBe(4); // exactly d's share
    const beforeLeave = new Map(owners);
    for (const [slot, o] of owners) if (o === 'b') owners.delete(slot);
    owners = settle(slots, ['a', 'c', 'd'], owners);
    expect(owners.size).toBe(16);
    expect([...owners].filter(([slot, o]) => beforeLeave.get(slot) !== o)).toHaveLength(4);
  });
});
