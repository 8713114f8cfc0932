import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { uploadsInFlight } from '../../src/http/write-limits.js';

/** A request as the auth hook leaves it: only its principal matters here. */
const requestOf = (agentId: number | null, tokenId: number | null = null) =>
  ({ actor: { role: 'agent', name: 'x', agentId, tokenId } }) as unknown as FastifyRequest;

describe('uploads in flight per principal', () => {
  it('lets a principal hold at most max uploads at once, each place back once released', () => {
    const uploads = uploadsInFlight(2);
    const ana = requestOf(1);
    const first = uploads.take(ana);
    uploads.take(ana);
    let refusal: unknown;
    try {
      uploads.take(ana);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({
      code: 'STEGA_ERR_TOO_MANY_WRITES',
      status: 429,
      retryAfterSeconds: 1,
    });
    // another principal has places of their own
    expect(() => uploads.take(requestOf(2))).not.toThrow();
    // a release gives its place back once, however often it is called (finish, then close)
    first();
    first();
    expect(() => uploads.take(ana)).not.toThrow();
    expect(() => uploads.take(ana)).toThrow(/too many uploads at once/);
  });

  it('does not count the configured admin token (no agent, no token id)', () => {
    const uploads = uploadsInFlight(1);
    for (let i = 0; i < 3; i++) expect(() => uploads.take(requestOf(null))).not.toThrow();
  });
});
