import { type MouseEvent, type ReactNode, useEffect, useRef } from 'react';
import type { Issue } from '../api.js';

/** The id of the input for an API issue path: `weekly_hours.monday[1].end` -> `f-weekly_hours-monday-1-end`. */
export function fieldId(path: string): string {
  return `f-${path.replace(/[^A-Za-z0-9_]+/g, '-').replace(/-+$/, '')}`;
}

/** The messages of the issues at exactly `path`. */
export function issueAt(issues: Issue[], path: string): string | undefined {
  const messages = issues.filter((issue) => issue.path === path).map((issue) => issue.message);
  return messages.length > 0 ? messages.join('; ') : undefined;
}

export interface FieldAria {
  id: string;
  'aria-invalid': boolean | undefined;
  'aria-describedby': string | undefined;
}

export interface FieldProps {
  /** The API's name for the field (its issue path): also gives the input's id. */
  path: string;
  /** Keeps ids unique when a page has several forms with the same fields. */
  idPrefix?: string;
  label: ReactNode;
  issues: Issue[];
  hint?: ReactNode;
  /** Show the hint under the input (keeps inputs of one row aligned). */
  hintAfter?: boolean;
  className?: string;
  children: (aria: FieldAria) => ReactNode;
}

/** A labelled input with its hint and, from the API's 400, its error right beneath it. */
export function Field({
  path,
  idPrefix,
  label,
  issues,
  hint,
  hintAfter,
  className,
  children,
}: FieldProps) {
  const id = fieldId(idPrefix ? `${idPrefix}.${path}` : path);
  const error = issueAt(issues, path);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean);
  return (
    <div className={`field${error ? ' has-error' : ''}${className ? ` ${className}` : ''}`}>
      <label htmlFor={id}>{label}</label>
      {hint && !hintAfter ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {children({
        id,
        'aria-invalid': error ? true : undefined,
        'aria-describedby': described.length > 0 ? described.join(' ') : undefined,
      })}
      {hint && hintAfter ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

/** A path and its parents, nearest first (`layers[0].name` -> `layers[0]` -> `layers`). */
function* pathAndParents(path: string): Generator<string> {
  for (let p = path; p; p = p.replace(/(\[\d+\]|\.[^.[]+)$/, '')) {
    yield p;
    if (!/(\[\d+\]|\.[^.[]+)$/.test(p)) return;
  }
}

/** The id of the element for `path` in a form whose fields carry `idPrefix`. */
function prefixedId(path: string, idPrefix: string | undefined): string {
  return fieldId(idPrefix ? `${idPrefix}.${path}` : path);
}

/** Whether the form has a field for `path` or for one of its parents (a link can focus it). */
export function hasField(path: string, idPrefix?: string): boolean {
  return inputFor(path, idPrefix) !== null;
}

/** The input of an issue, or of its nearest parent path (`email[1]` -> `email`). */
function inputFor(path: string, idPrefix?: string): HTMLElement | null {
  for (const p of pathAndParents(path)) {
    const found = document.getElementById(prefixedId(p, idPrefix));
    if (found) return found;
  }
  return null;
}

function focusField(event: MouseEvent<HTMLAnchorElement>) {
  const { path, prefix } = event.currentTarget.dataset;
  const target = inputFor(path ?? '', prefix);
  event.preventDefault();
  if (!target) return;
  target.focus();
  target.scrollIntoView({ block: 'center' });
}

/**
 * The words for an issue's field: the label of its input on the page (or of its nearest
 * parent's), else the path made readable (`resolution_minutes` -> `Resolution minutes`).
 */
export function fieldLabel(path: string, idPrefix?: string): string {
  for (const p of pathAndParents(path)) {
    const id = prefixedId(p, idPrefix);
    // a field's own label, or the legend of the group it heads (a row of checkboxes)
    const found =
      document.querySelector(`label[for="${id}"]`) ??
      document.getElementById(id)?.closest('fieldset')?.querySelector(':scope > legend');
    const text = found?.textContent?.trim();
    if (text) return text;
  }
  return readablePath(path);
}

function readablePath(path: string): string {
  if (path === '(body)' || path === '(root)') return 'The request';
  const words = path
    .replace(/\[(\d+)\]/g, (_, n: string) => ` ${Number(n) + 1}`)
    .split('.')
    .map((part) => part.replace(/_id\b/, '').replace(/_/g, ' ').trim())
    .filter(Boolean)
    .join(', ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p className="field-error" id={id}>
      <span aria-hidden="true">⚠ </span>
      {message}
    </p>
  );
}

/**
 * The issues of a failed save, each linking to its field; takes the focus when it appears so
 * keyboard and screen-reader users learn what to fix.
 */
export function ErrorSummary({
  issues,
  message,
  knownPaths,
  idPrefix,
}: {
  issues: Issue[];
  message: string | undefined;
  /** Paths that have a field in this form; others are listed without a link. */
  knownPaths?: (path: string) => boolean;
  /** The prefix of the form's field ids, when its fields carry one (several forms on a page). */
  idPrefix?: string | undefined;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (message) ref.current?.focus();
  }, [message]);
  if (!message) return null;
  return (
    <div className="error-summary" role="alert" tabIndex={-1} ref={ref}>
      <h2>Not saved</h2>
      {issues.length === 0 ? <p>{message}</p> : null}
      {issues.length > 0 ? (
        <ul>
          {issues.map((issue) => (
            <li key={`${issue.path}:${issue.message}`}>
              {knownPaths?.(issue.path) !== false ? (
                <a
                  href={`#${prefixedId(issue.path, idPrefix)}`}
                  data-path={issue.path}
                  data-prefix={idPrefix}
                  onClick={focusField}
                >
                  {fieldLabel(issue.path, idPrefix)}: {issue.message}
                </a>
              ) : (
                `${fieldLabel(issue.path, idPrefix)}: ${issue.message}`
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
