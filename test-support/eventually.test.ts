import { describe, expect, it } from 'vitest';
import { eventually } from './eventually.js';

/** A probe answering `answers` in turn, counting its calls. */
function probeOf<T>(...answers: T[]) {
  const probe = async () => {
    probe.calls++;
    return answers[Math.min(probe.calls, answers.length) - 1] as T;
  };
  probe.calls = 0;
  return probe;
}

describe('eventually', () => {
  it('polls past undefined, null and false, and returns the first answer', async () => {
    const probe = probeOf<string | undefined | null | false>(undefined, null, false, 'ready');
    await expect(eventually(probe, 'ready', { intervalMs: 1 })).resolves.toBe('ready');
    expect(probe.calls).toBe(4);
  });

  it('takes 0, an empty string and true as answers', async () => {
    await expect(eventually(() => 0, 'zero')).resolves.toBe(0);
    await expect(eventually(() => '', 'empty')).resolves.toBe('');
    await expect(eventually(async () => true, 'true')).resolves.toBe(true);
  });

  it('fails after its timeout, naming what it waited for', async () => {
    const probe = probeOf(false);
    await expect(
      eventually(probe, 'the moon to turn blue', { timeoutMs: 30, intervalMs: 5 }),
    ).rejects.toThrow('timed out after 30 ms waiting for the moon to turn blue');
    expect(probe.calls).toBeGreaterThan(1);
  });

  it('fails at once when the probe throws', async () => {
    const probe = probeOf(undefined);
    const failing = async () => {
      await probe();
      throw new Error('the receiver died');
    };
    await expect(eventually(failing, 'a call')).rejects.toThrow('the receiver died');
    expect(probe.calls).toBe(1);
  });
});
