import type { Save } from '../hooks/use-save.js';
import { ErrorSummary, hasField } from './field.js';

/** What the last save of a form did: the summary of its errors, or its confirmation. */
export function SaveFeedback({
  save,
  knownPaths,
  idPrefix,
}: {
  save: Save;
  /**
   * Paths that have a field in this form; others are listed without a link. Default: those
   * whose field (or a parent's) is on the page under `idPrefix`.
   */
  knownPaths?: (path: string) => boolean;
  /** The prefix of the form's field ids, when its fields carry one. */
  idPrefix?: string;
}) {
  return (
    <>
      <ErrorSummary
        issues={save.issues}
        message={save.message}
        knownPaths={knownPaths ?? ((path) => hasField(path, idPrefix))}
        idPrefix={idPrefix}
      />
      <p role="status" className="notice ok" hidden={!save.saved}>
        {save.saved}
      </p>
    </>
  );
}
