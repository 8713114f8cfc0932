import { type QueryKey, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError, type Issue } from '../api.js';

export interface Save {
  /** The field issues of the last failed save (the API's 400). */
  issues: Issue[];
  /** Why the last save failed, for the error summary. */
  message: string | undefined;
  /** The confirmation of the last save, for a status line. */
  saved: string | undefined;
  setSaved: (text: string | undefined) => void;
  busy: boolean;
  /** The last save was refused because someone else saved first (412): nothing was written. */
  stale: boolean;
  /**
   * Starts the form again from the stored version after a `stale` refusal: runs `load` (which
   * fetches it and sets the form's state) as a save is run, and says so once it is loaded.
   */
  reload: (load: () => Promise<void>) => Promise<void>;
  /**
   * Clears the last outcome, runs `work`, and keeps the issues and message of a failure.
   * Resolves true once the save went through and the queries it invalidates have fetched
   * again (a form closed then shows what was saved, and opened again starts from it).
   */
  run: (work: () => Promise<void>) => Promise<boolean>;
}

/**
 * The state of a form's save (a TanStack mutation): busy while it runs, then its issues or its
 * confirmation. After a save that went through, or one refused because someone else's change
 * came first (412), the queries under `invalidates` fetch again.
 */
export function useSave(invalidates: readonly QueryKey[] = []): Save {
  const client = useQueryClient();
  const [saved, setSaved] = useState<string | undefined>();
  const mutation = useMutation({
    mutationFn: (work: () => Promise<void>) => work(),
    onSuccess: () =>
      Promise.all(invalidates.map((queryKey) => client.invalidateQueries({ queryKey }))),
    // someone else's change came first (412): fetch it, so the form opened again starts from it
    onError: (error) => {
      if (error instanceof ApiError && error.status === 412) {
        for (const queryKey of invalidates) void client.invalidateQueries({ queryKey });
      }
    },
  });
  const error = mutation.error;
  const run = async (work: () => Promise<void>) => {
    setSaved(undefined);
    mutation.reset();
    try {
      await mutation.mutateAsync(work);
      return true;
    } catch {
      // kept in mutation.error for the form
      return false;
    }
  };
  return {
    issues: error instanceof ApiError ? error.issues : [],
    message: error ? error.message : undefined,
    saved,
    setSaved,
    busy: mutation.isPending,
    stale: error instanceof ApiError && error.status === 412,
    reload: async (load) => {
      if (await run(load))
        setSaved('Loaded the version saved by someone else: make your change again.');
    },
    run,
  };
}
