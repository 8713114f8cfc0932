import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { healthFileCheck, startHealthFile } from '../../src/processes/health.js';

describe('heartbeat file and `stega healthcheck`', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-health-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const logger = createLogger('silent', 'test');

  it('is healthy while fresh and ok, unhealthy when stale, failing or missing', async () => {
    const file = path.join(dir, 'a.json');
    const at = new Date('2030-01-01T00:00:00Z');
    writeFileSync(file, JSON.stringify({ role: 'jobs', pid: 7, ok: true, at: at.toISOString() }));
    expect(await healthFileCheck(file, 30_000, new Date(at.getTime() + 29_000))).toEqual({
      healthy: true,
      reason: 'jobs (pid 7): ok',
    });
    const stale = await healthFileCheck(file, 30_000, new Date(at.getTime() + 31_000));
    expect(stale).toEqual({ healthy: false, reason: 'jobs (pid 7): last heartbeat 31 s ago' });

    writeFileSync(
      file,
      JSON.stringify({ role: 'jobs', pid: 7, ok: false, at: at.toISOString(), error: 'db down' }),
    );
    expect(await healthFileCheck(file, 30_000, at)).toEqual({
      healthy: false,
      reason: 'jobs (pid 7): db down',
    });
    expect((await healthFileCheck(path.join(dir, 'missing.json'))).healthy).toBe(false);
  });

  it('writes the probe result at once and removes the file on stop', async () => {
    const file = path.join(dir, 'b.json');
    let fail = false;
    const service = startHealthFile(
      file,
      'ticker',
      async () => {
        if (fail) throw new Error('probe failed');
      },
      logger,
      20,
    );
    await expect.poll(async () => (await healthFileCheck(file)).healthy).toBe(true);
    fail = true;
    await expect
      .poll(async () => (await healthFileCheck(file)).reason)
      .toBe(`ticker (pid ${process.pid}): probe failed`);
    await service.stop();
    expect((await healthFileCheck(file)).reason).toMatch(/no readable health file/);
  });
});
