import type { Save } from '../hooks/use-save.js';
import { ErrorSummary, hasField } from './field.js';

/** What the last save of a form did: the summary of its errors, or its confirmation. */
export function SaveFeedback({
  save,
  knownPaths,
  idPrefix,
  onReload,
}: {
  save: Save;
  /**
   * Paths that have a field in this form; others are listed without a link. Default: those
   * whose field (or a parent's) is on the page under `idPrefix`.
   */
  knownPaths?: (path: string) => boolean;
  /** The prefix of the form's field ids, when its fields carry one. */
  idPrefix?: string;
  /**
   * Starts the form again from the version someone else saved, offered after a save refused
   * for that (412); without it, closing the form and opening it again does the same.
   */
  onReload?: () => void;
}) {
  return (
    <>
      <ErrorSummary
        issues={save.issues}
        message={save.message}
        knownPaths={knownPaths ?? ((path) => hasField(path, idPrefix))}
        idPrefix={idPrefix}
      />
      {save.stale && onReload ? (
        <p className="actions">
          <button type="button" className="secondary" onClick={onReload}>
            Load their version (what you typed is discarded)
          </button>
        </p>
      ) : null}
      <p role="status" className="notice ok" hidden={!save.saved}>
        {save.saved}
      </p>
    </>
  );
}
