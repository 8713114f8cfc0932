import { useEffect, useState } from 'react';
import { api } from '../api.js';

/** An item of a paginated list: newest first by `at`, then by id. */
interface Paged {
  id: number;
}

/** A page as the API answers it: newest first, and the cursor of the older ones. */
interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * A list whose newest items come with a live object (the ticket's comments, its activity)
 * and whose older ones are fetched on demand from `path`, a page at a time. The live window
 * moves as new items arrive; once older pages are shown, items it leaves behind are kept, so
 * the list never has a gap. `at` gives an item's instant (ISO), for the order.
 */
export function useOlderPages<T extends Paged>(options: {
  latest: T[];
  latestNextCursor: string | null;
  path: string;
  at: (item: T) => string;
  pageSize?: number;
}) {
  const { latest, latestNextCursor, path, at, pageSize = 50 } = options;
  const [kept, setKept] = useState<Map<number, T>>(() => new Map());
  // undefined until an older page is fetched: the live window's own cursor holds
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (cursor === undefined) return;
    setKept((before) => {
      const next = new Map(before);
      for (const item of latest) next.set(item.id, item);
      return next;
    });
  }, [latest, cursor]);
  const inWindow = new Set(latest.map((item) => item.id));
  const items = [...latest, ...[...kept.values()].filter((item) => !inWindow.has(item.id))].sort(
    (a, b) => Date.parse(at(b)) - Date.parse(at(a)) || b.id - a.id,
  );
  const hasOlder = (cursor === undefined ? latestNextCursor : cursor) !== null;
  const loadOlder = async () => {
    const oldest = items.at(-1);
    if (!oldest) return;
    setLoading(true);
    setError(undefined);
    try {
      const page = await api<Page<T>>('GET', `${path}?cursor=${oldest.id}&limit=${pageSize}`);
      setKept((before) => {
        const next = new Map(before);
        for (const item of [...latest, ...page.items]) next.set(item.id, item);
        return next;
      });
      setCursor(page.next_cursor);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setLoading(false);
    }
  };
  return { items, hasOlder, loadOlder, loading, error };
}
