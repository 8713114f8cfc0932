/** A page of a ticket's entries (comments, activity), newest first. */
export interface NewestFirstPage<T> {
  items: T[];
  /** The cursor of the next (older) page: the id of this page's oldest; null when it is the last. */
  next_cursor: string | null;
}

/** Where a newest-first page starts: older than the entry `before` (absent: the newest). */
export interface NewestFirstQuery {
  before?: number | undefined;
  limit: number;
}

/**
 * The page of `rows`, read with `limit + 1` so that one more row tells there is a next page,
 * each turned into an item by `of`.
 */
export function newestFirstPage<T extends { id: number }>(
  rows: Record<string, unknown>[],
  limit: number,
  of: (row: Record<string, unknown>) => T,
): NewestFirstPage<T> {
  const items = rows.slice(0, limit).map(of);
  const last = items.at(-1);
  return { items, next_cursor: rows.length > limit && last ? String(last.id) : null };
}
