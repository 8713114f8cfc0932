// How a PartitionedConsumer worker decides which slots to hold: each worker acts on its
// own share only, from the same two facts every worker reads (the live workers, and which
// slots have no live holder), so the workers converge without talking to each other, and
// slots move only when the set of workers changes.

/**
 * How many of `slots` slots worker `me` should hold when the `live` workers (sorted, `me`
 * among them) share them: an equal share, one more for the first `slots % live.length`.
 */
export function slotShare(live: readonly string[], me: string, slots: number): number {
  const workers = live.includes(me) ? live : [...live, me].sort();
  const index = workers.indexOf(me);
  const base = Math.floor(slots / workers.length);
  return base + (index < slots % workers.length ? 1 : 0);
}

/**
 * The worker's next moves: the slots to give back (above its share: the highest it
 * holds) and the free slots to try, in order, while below it (starting at a place of
 * its own, so two workers seldom reach for one slot first; a claim that loses the race
 * answers null and the next one is tried).
 * free: slots without a live holder (released, never claimed, or their lease lapsed).
 */
export function planSlots(input: {
  slots: number;
  me: string;
  live: readonly string[];
  held: ReadonlySet<number>;
  free: readonly number[];
}): { release: number[]; claim: number[]; share: number } {
  const share = slotShare(input.live, input.me, input.slots);
  const held = [...input.held].sort((a, b) => a - b);
  if (held.length > share) return { release: held.slice(share).reverse(), claim: [], share };
  if (held.length === share) return { release: [], claim: [], share };
  const workers = input.live.includes(input.me) ? input.live : [...input.live, input.me].sort();
  const start = Math.floor((workers.indexOf(input.me) * input.slots) / workers.length);
  const free = input.free
    .filter((slot) => !input.held.has(slot))
    .sort(
      (a, b) =>
        ((a - start + input.slots) % input.slots) - ((b - start + input.slots) % input.slots),
    );
  return { release: [], claim: free, share };
}
