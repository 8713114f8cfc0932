/**
 * Coalesces concurrent requests into batches: every `submit` made while no batch is being
 * written (or while one is) joins the next batch, written by one call of `write`. Under
 * load the batches grow by themselves; alone, a request waits for one event-loop turn.
 * `write` returns one result per item, in order; when it throws, every item of the batch
 * is rejected with that error.
 */
export class Coalescer<Item, Result> {
  private pending: { item: Item; resolve: (r: Result) => void; reject: (e: unknown) => void }[] =
    [];
  private writing = false;
  private scheduled = false;

  constructor(
    private readonly write: (items: Item[]) => Promise<Result[]>,
    private readonly maxBatch = 500,
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.writing || this.scheduled || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    this.writing = true;
    try {
      const results = await this.write(batch.map((entry) => entry.item));
      for (const [i, entry] of batch.entries()) entry.resolve(results[i] as Result);
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      this.writing = false;
      this.schedule();
    }
  }
}
