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
  /** Clears the last outcome, runs `work`, and keeps the issues and message of a failure. */
  run: (work: () => Promise<void>) => Promise<void>;
}

/** The state of a form's save: busy while it runs, then its issues or its confirmation. */
export function useSave(): Save {
  const [issues, setIssues] = useState<Issue[]>([]);
  const [message, setMessage] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setIssues([]);
    setMessage(undefined);
    setSaved(undefined);
    try {
      await work();
    } catch (error) {
      if (error instanceof ApiError) {
        setIssues(error.issues);
        setMessage(error.message);
      } else setMessage((error as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return { issues, message, saved, setSaved, busy, run };
}
