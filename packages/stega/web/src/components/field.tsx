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

/** The input of an issue, or of its nearest parent path (`email[1]` -> `email`). */
function inputFor(path: string): HTMLElement | null {
  for (let p = path; p; p = p.replace(/(\[\d+\]|\.[^.[]+)$/, '')) {
    const found = document.getElementById(fieldId(p));
    if (found) return found;
    if (!/(\[\d+\]|\.[^.[]+)$/.test(p)) break;
  }
  return null;
}

function focusField(event: MouseEvent<HTMLAnchorElement>) {
  const target = inputFor(event.currentTarget.dataset.path ?? '');
  event.preventDefault();
  if (!target) return;
  target.focus();
  target.scrollIntoView({ block: 'center' });
}

/**
 * The words for an issue's field: the label of its input on the page (or of its nearest
 * parent's), else the path made readable (`resolution_minutes` -> `Resolution minutes`).
 */
export function fieldLabel(path: string): string {
  for (let p = path; p; p = p.replace(/(\[\d+\]|\.[^.[]+)$/, '')) {
    const found = document.querySelector(`label[for="${fieldId(p)}"]`);
    const text = found?.textContent?.trim();
    if (text) return text;
    if (!/(\[\d+\]|\.[^.[]+)$/.test(p)) break;
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
}: {
  issues: Issue[];
  message: string | undefined;
  /** Paths that have a field in this form; others are listed without a link. */
  knownPaths?: (path: string) => boolean;
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
                <a href={`#${fieldId(issue.path)}`} data-path={issue.path} onClick={focusField}>
                  {fieldLabel(issue.path)}: {issue.message}
                </a>
              ) : (
                `${fieldLabel(issue.path)}: ${issue.message}`
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
