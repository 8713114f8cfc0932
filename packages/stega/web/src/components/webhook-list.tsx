import type { Issue } from '../api.js';
import { TextField } from './form-fields.js';

/** A webhook as a form edits it: the secret is write-only (`has_secret` says one is set). */
export interface WebhookDraft {
  url: string;
  secret: string;
  has_secret: boolean;
}

/**
 * The editor of a list of webhooks (URL and signing secret each, add and remove), its errors
 * next to each field. `path` is the API's list (`alert_channels.webhooks`), `noun` names the
 * rows in labels ("Fallback webhook 2 URL").
 */
export function WebhookListEditor({
  path,
  noun,
  title,
  hooks,
  issues,
  secretSetHint,
  onChange,
}: {
  path: string;
  noun: string;
  title: string;
  hooks: WebhookDraft[];
  issues: Issue[];
  /** The hint of a row whose secret is set (what happens when it is not re-entered). */
  secretSetHint: string;
  onChange: (hooks: WebhookDraft[]) => void;
}) {
  const change = (index: number, patch: Partial<WebhookDraft>) =>
    onChange(hooks.map((w, i) => (i === index ? { ...w, ...patch } : w)));
  return (
    <div className="webhooks">
      <p className="label-like">{title}</p>
      {hooks.length === 0 ? <p className="muted small">None.</p> : null}
      {hooks.map((w, i) => {
        const base = `${path}[${i}]`;
        const name = `${noun} ${i + 1}`;
        return (
          // rows have no identity of their own: the API knows a webhook by its place
          <div className="webhook-row" key={i}>
            <TextField
              path={`${base}.url`}
              label={`${name} URL`}
              issues={issues}
              value={w.url}
              onChange={(url) => change(i, { url })}
              input={{ type: 'url' }}
            />
            <TextField
              path={`${base}.secret`}
              label={`${name} secret`}
              issues={issues}
              hintAfter
              hint={
                w.has_secret
                  ? secretSetHint
                  : 'Optional, at least 16 characters: calls are signed with HMAC-SHA256.'
              }
              value={w.secret}
              onChange={(secret) => change(i, { secret })}
              input={{ type: 'password', autoComplete: 'off' }}
            />
            <button
              type="button"
              className="secondary small"
              onClick={() => onChange(hooks.filter((_, j) => j !== i))}
            >
              Remove {name.charAt(0).toLowerCase() + name.slice(1)}
            </button>
          </div>
        );
      })}
      <button
        type="button"
        className="secondary small"
        onClick={() => onChange([...hooks, { url: '', secret: '', has_secret: false }])}
      >
        Add a {noun.toLowerCase()}
      </button>
    </div>
  );
}

/** Webhook drafts of a policy's stored webhooks (their secrets are never sent back). */
export const webhookDrafts = (hooks: { url: string; has_secret: boolean }[]): WebhookDraft[] =>
  hooks.map((w) => ({ url: w.url, secret: '', has_secret: w.has_secret }));
