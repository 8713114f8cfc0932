import { type FormEvent, useState } from 'react';
import { ApiError, api } from '../api.js';
import { fieldId } from '../components/field.js';
import { useTitle } from '../hooks/use-title.js';
import { storeToken } from '../session.js';
import type { Session } from '../types.js';

/** Sign in with an API token; it is kept in sessionStorage (this tab only). */
export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  useTitle('Sign in');
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const id = fieldId('token');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const value = token.trim();
    if (!value) {
      setError('Enter an API token.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const session = await api<Session>('GET', '/api/session', undefined, { token: value });
      storeToken(value);
      onSignedIn(session);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'That token is not valid (unknown or revoked).'
          : `Could not sign in: ${(err as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <div className="sign-in-card">
        <h1>Sign in to Stega</h1>
        <form onSubmit={submit} noValidate>
          <div className={`field${error ? ' has-error' : ''}`}>
            <label htmlFor={id}>API token</label>
            <p className="hint" id={`${id}-hint`}>
              The admin token is the value of <code>STEGA_ADMIN_TOKEN</code>, or, when that is not
              set, the one generated into the file <code>admin-token</code> of Stega's data
              directory (<code>STEGA_DATA_DIR</code>, by default <code>.stega</code>); Stega prints
              the file's path when it starts. Admins issue agents' tokens on the Agents page.
            </p>
            <input
              id={id}
              name="token"
              type="password"
              autoComplete="current-password"
              spellCheck={false}
              value={token}
              onChange={(e) => setToken(e.target.value)}
              aria-invalid={error ? true : undefined}
              aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
              autoFocus
            />
            {error ? (
              <p className="field-error" id={`${id}-error`} role="alert">
                <span aria-hidden="true">⚠ </span>
                {error}
              </p>
            ) : null}
          </div>
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p className="muted small">The token is kept in this browser tab only (sessionStorage).</p>
      </div>
    </main>
  );
}
