import type { CallOutcome, Failure } from '../../src/domain/delivery-outcome.js';

/** A failed call's outcome as an error, so a test can expect a call to reject with its words. */
export class CallFailed extends Error {
  override name = 'CallFailed';
  constructor(readonly failure: Failure) {
    super(failure.text);
  }

  /** The answer's status, for `http` and `rate_limited` failures. */
  get status(): number | undefined {
    return 'status' in this.failure ? this.failure.status : undefined;
  }
}

/** Resolves when the call was delivered; rejects with CallFailed when it failed. */
export async function delivered(outcome: Promise<CallOutcome>): Promise<void> {
  const result = await outcome;
  if (result.type === 'failed') throw new CallFailed(result.failure);
}
