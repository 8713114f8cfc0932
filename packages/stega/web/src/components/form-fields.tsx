import { type InputHTMLAttributes, type ReactNode, useMemo } from 'react';
import type { Issue } from '../api.js';
import { label } from '../format.js';
import { PRIORITIES } from '../types.js';
import { Field, FieldError, type FieldProps, fieldId } from './field.js';

type InputProps = Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'id' | 'value' | 'onChange' | 'aria-invalid' | 'aria-describedby'
>;

type TextFieldProps = Omit<FieldProps, 'children' | 'className'> & {
  value: string;
  onChange: (value: string) => void;
  /** Further attributes of the input (type, inputMode, placeholder, name…). */
  input?: InputProps;
};

/** A labelled text input with its hint and its error from the API beneath it. */
export function TextField({ value, onChange, input, ...field }: TextFieldProps) {
  return (
    <Field {...field}>
      {(aria) => (
        <input {...input} {...aria} value={value} onChange={(e) => onChange(e.target.value)} />
      )}
    </Field>
  );
}

/** One choice of a {@link SelectField}. */
export interface Choice {
  value: string;
  label: string;
}

/** A labelled select with its hint and its error from the API beneath it. */
export function SelectField({
  value,
  onChange,
  choices,
  name,
  ...field
}: Omit<FieldProps, 'children' | 'className'> & {
  value: string;
  onChange: (value: string) => void;
  choices: Choice[];
  /** The select's form name. */
  name?: string;
}) {
  return (
    <Field {...field}>
      {(aria) => (
        <select {...aria} name={name} value={value} onChange={(e) => onChange(e.target.value)}>
          {choices.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** Choices of named records (agents, teams), by id, after the given leading ones. */
export function choicesOf(
  records: readonly { id: number; name: string }[] | undefined,
  first: Choice[] = [],
): Choice[] {
  return [...first, ...(records ?? []).map((r) => ({ value: String(r.id), label: r.name }))];
}

/** The priorities, most urgent first, in words. */
export const PRIORITY_CHOICES: Choice[] = PRIORITIES.map((p) => ({ value: p, label: label(p) }));

/** The IANA zones this browser knows, offered while typing a zone. */
function useZones(): string[] {
  return useMemo(() => {
    try {
      return Intl.supportedValuesOf('timeZone');
    } catch {
      return ['UTC'];
    }
  }, []);
}

/** A time-zone input: free text (the API checks the name) with the known zones to pick from. */
export function TimeZoneField(props: Omit<TextFieldProps, 'input'>) {
  const zones = useZones();
  const listId = `${fieldId(props.idPrefix ? `${props.idPrefix}.${props.path}` : props.path)}-zones`;
  return (
    <Field {...props}>
      {(aria) => (
        <>
          <input
            {...aria}
            list={listId}
            autoComplete="off"
            value={props.value}
            onChange={(e) => props.onChange(e.target.value)}
          />
          <datalist id={listId}>
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
        </>
      )}
    </Field>
  );
}

/** A checkbox with its label; with `path`, its id is the API's field (the error summary links to it). */
export function CheckField({
  path,
  checked,
  onChange,
  children,
}: {
  /** The API's field, when the box is one (its id, for the error summary's link). */
  path?: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  children: ReactNode;
}) {
  return (
    <label className="check">
      <input
        type="checkbox"
        id={path === undefined ? undefined : fieldId(path)}
        checked={checked}
        onChange={(e) => onChange(e.target.checked)}
      />
      {children}
    </label>
  );
}

/**
 * The messages of the issues of a list field (`email`, `email[2]`…) in one line, each item's
 * named by its place: "address 3: Invalid email address".
 */
export function listIssues(issues: Issue[], prefix: string, noun: string): string {
  return issues
    .filter((i) => i.path === prefix || i.path.startsWith(`${prefix}[`))
    .map((i) => {
      const index = /^\[(\d+)\]/.exec(i.path.slice(prefix.length))?.[1];
      return index === undefined ? i.message : `${noun} ${Number(index) + 1}: ${i.message}`;
    })
    .join('; ');
}

/** A textarea of addresses (one per line) whose items' errors show beneath it in one line. */
export function AddressListField({
  path,
  label,
  issues,
  rows,
  value,
  onChange,
}: {
  path: string;
  label: ReactNode;
  issues: Issue[];
  rows: number;
  value: string;
  onChange: (value: string) => void;
}) {
  const id = fieldId(path);
  const error = listIssues(issues, path, 'address');
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <label htmlFor={id}>{label}</label>
      <p className="hint" id={`${id}-hint`}>
        One address per line.
      </p>
      <textarea
        id={id}
        rows={rows}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
      />
      <FieldError id={`${id}-error`} message={error || undefined} />
    </div>
  );
}

/** The error of a whole group (`alert_channels.retry`), under its fieldset. */
export function GroupError({ path, issues }: { path: string; issues: Issue[] }) {
  const message = issues
    .filter((issue) => issue.path === path)
    .map((issue) => issue.message)
    .join('; ');
  if (!message) return null;
  return <FieldError id={`${fieldId(path)}-error`} message={message} />;
}
