import { describe, expect, it } from 'vitest';
import { duplicatesOf, type Fault, resendCause } from './faults.js';

describe('chaos bookkeeping: which resends a fault explains', () => {
  const kill: Fault = { kind: 'worker-kill', at: 100_000, target: 'w1-1' };
  const stop: Fault = { kind: 'worker-stop', at: 200_000, end: 210_000, target: 'w2-1' };
  const restart: Fault = { kind: 'pg-restart', at: 300_000, end: 302_000 };
  const faults = [kill, stop, restart];

  it('a kill or a stop explains a send shortly before it; nothing is sent during a stop', () => {
    expect(resendCause(99_000, faults)).toBe(kill);
    expect(resendCause(94_000, faults)).toBeUndefined();
    expect(resendCause(100_500, faults)).toBe(kill);
    expect(resendCause(199_000, faults)).toBe(stop);
    expect(resendCause(205_000, faults)).toBeUndefined();
  });

  it('the restart explains sends from shortly before it until it is over', () => {
    expect(resendCause(296_000, faults)).toBe(restart);
    expect(resendCause(302_500, faults)).toBe(restart);
    expect(resendCause(304_000, faults)).toBeUndefined();
  });

  it('finds the duplicates and their causes by the first receipt', () => {
    const { keys, duplicates } = duplicatesOf(
      [
        { key: 'a', at: 99_500 },
        { key: 'b', at: 150_000 },
        { key: 'a', at: 115_000 },
        { key: 'c', at: 150_000 },
        { key: 'c', at: 160_000 },
      ],
      faults,
    );
    expect(keys.size).toBe(3);
    expect(duplicates).toEqual([
      { key: 'a', times: [99_500, 115_000], cause: kill },
      { key: 'c', times: [150_000, 160_000], cause: undefined },
    ]);
  });
});
