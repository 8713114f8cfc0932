import { type FormEvent, useEffect, useState } from 'react';
import { ApiError, api, type Issue } from '../api.js';
import { fieldId } from '../components/field.js';
import { TextField } from '../components/form-fields.js';
import { useTitle } from '../hooks/use-title.js';
import { storeToken } from '../session.js';
import type { Session } from '../types.js';

/** What GET /api/auth/options says: single sign-on, when configured. */
interface SignInOptions {
  single_sign_on: { provider_name: string; start_url: string } | null;
}

/** Why a single sign-on was refused (the callback's `sso_error`), in words for people. */
function singleSignOnRefusal(reason: string, provider: string): string {
  switch (reason) {
    case 'no_email':
      return `${provider} sent no email address for you, so Stega cannot tell who you are. Ask an admin.`;
    case 'unverified_email':
      return `${provider} has not verified your email address, so Stega cannot sign you in with it. Verify it there, or sign in with your password.`;
    case 'domain_not_allowed':
      return `Your email address's domain may not sign in to Stega with ${provider}. Ask an admin.`;
    case 'deactivated':
      return 'Your Stega account is deactivated. Ask an admin to reactivate it.';
    case 'cancelled':
      return `The sign-in with ${provider} was cancelled.`;
    case 'expired':
      return 'That sign-in took too long, or was begun in another browser. Try again.';
    default:
      return `The sign-in with ${provider} failed. Try again; if it keeps failing, an admin finds the reason in Stega's log.`;
  }
}

/**
 * Sign in with email and password (a session cookie every tab of this browser shares, with a
 * TOTP code when the account has a second factor), with the single sign-on provider when one
 * is configured, ask for a password reset link, or — the admin token, break-glass — sign this
 * tab in with an API token (kept in sessionStorage, this tab only).
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  useTitle('Sign in');
  const [mode, setMode] = useState<'password' | 'reset'>('password');
  const [options, setOptions] = useState<SignInOptions | undefined>();
  // a refused single sign-on comes back here with its reason; the address is cleaned at once
  const [refusal] = useState(() => {
    const reason = new URLSearchParams(window.location.search).get('sso_error');
    if (reason !== null) window.history.replaceState(null, '', '/sign-in');
    return reason;
  });
  useEffect(() => {
    api<SignInOptions>('GET', '/api/auth/options', undefined, { signingIn: true })
      .then(setOptions)
      .catch(() => setOptions({ single_sign_on: null }));
  }, []);
  const sso = options?.single_sign_on ?? null;
  // the page asked for (a ticket link from an alert mail), opened again after signing in
  const here = `${window.location.pathname}${window.location.search}`;
  const returnTo = here.startsWith('/sign-in') ? '/tickets' : here;
  return (
    <main id="main" className="sign-in">
      <div className="sign-in-card">
        <h1>Sign in to Stega</h1>
        {refusal !== null ? (
          <p className="notice error" role="alert">
            {singleSignOnRefusal(refusal, sso?.provider_name ?? 'single sign-on')}
          </p>
        ) : null}
        {sso ? (
          <p className="single-sign-on">
            <a
              className="button primary"
              href={`${sso.start_url}?return_to=${encodeURIComponent(returnTo)}`}
            >
              Sign in with {sso.provider_name}
            </a>
          </p>
        ) : null}
        {sso ? <p className="muted small">or with your email and password:</p> : null}
        {mode === 'password' ? (
          <PasswordForm onSignedIn={onSignedIn} onForgot={() => setMode('reset')} />
        ) : (
          <ResetRequestForm onBack={() => setMode('password')} />
        )}
        <TokenForm onSignedIn={onSignedIn} />
      </div>
    </main>
  );
}

function PasswordForm({
  onSignedIn,
  onForgot,
}: {
  onSignedIn: (session: Session) => void;
  onForgot: () => void;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  // the account has a second factor: the password was right, a code must come with it
  const [needsCode, setNeedsCode] = useState(false);
  const [issues, setIssues] = useState<Issue[]>([]);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setIssues([]);
    try {
      const session = await api<Session>(
        'POST',
        '/api/auth/sign-in',
        { email: email.trim(), password, ...(needsCode ? { code: code.trim() } : {}) },
        { signingIn: true },
      );
      onSignedIn(session);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'STEGA_ERR_SECOND_FACTOR_REQUIRED') {
        setNeedsCode(true);
        return;
      }
      if (needsCode) setCode('');
      setIssues(
        error instanceof ApiError && error.issues.length > 0
          ? error.issues
          : [{ path: 'password', message: (error as Error).message }],
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} noValidate aria-label="Sign in with email and password">
      <TextField
        path="email"
        label="Email"
        issues={issues}
        value={email}
        onChange={setEmail}
        input={{ type: 'email', autoComplete: 'username', autoFocus: true, spellCheck: false }}
      />
      <TextField
        path="password"
        label="Password"
        issues={issues}
        value={password}
        onChange={setPassword}
        input={{ type: 'password', autoComplete: 'current-password' }}
      />
      {needsCode ? (
        <TextField
          path="code"
          label="Code"
          hint="The 6-digit code your authenticator app shows for Stega now, or one of your recovery codes."
          issues={issues}
          value={code}
          onChange={setCode}
          input={{
            autoComplete: 'one-time-code',
            inputMode: 'numeric',
            autoFocus: true,
            spellCheck: false,
          }}
        />
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <button type="button" className="link-button" onClick={onForgot}>
          Forgot your password?
        </button>
      </div>
      <p className="muted small">
        New here? An admin sends you an invitation by email; its link lets you set your password.
      </p>
    </form>
  );
}

function ResetRequestForm({ onBack }: { onBack: () => void }) {
  const [email, setEmail] = useState('');
  const [issues, setIssues] = useState<Issue[]>([]);
  const [sent, setSent] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setIssues([]);
    try {
      await api('POST', '/api/auth/reset-request', { email: email.trim() }, { signingIn: true });
      setSent(true);
    } catch (error) {
      setIssues(
        error instanceof ApiError && error.issues.length > 0
          ? error.issues
          : [{ path: 'email', message: (error as Error).message }],
      );
    }
  };
  return (
    <form onSubmit={submit} noValidate aria-label="Reset your password">
      <h2>Reset your password</h2>
      {sent ? (
        <p className="notice ok" role="status">
          If an account has this address, a link to set a new password is on its way. It works once,
          for an hour.
        </p>
      ) : null}
      <TextField
        path="email"
        idPrefix="reset"
        label="Your email"
        issues={issues}
        value={email}
        onChange={setEmail}
        input={{ type: 'email', autoComplete: 'username', spellCheck: false }}
      />
      <div className="actions">
        <button type="submit" className="primary">
          Email me a link
        </button>
        <button type="button" className="link-button" onClick={onBack}>
          Back to sign-in
        </button>
      </div>
    </form>
  );
}

/** The break-glass way in: an API token (the admin token) for this tab only. */
function TokenForm({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
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
    <details className="token-sign-in">
      <summary>Sign in with an API token instead</summary>
      <form onSubmit={submit} noValidate aria-label="Token sign-in">
        <div className={`field${error ? ' has-error' : ''}`}>
          <label htmlFor={id}>API token</label>
          <p className="hint" id={`${id}-hint`}>
            For the first sign-in and when nothing else works. The admin token is the value of{' '}
            <code>STEGA_ADMIN_TOKEN</code>, or, when that is not set, the one generated into the
            file <code>admin-token</code> of Stega's data directory (<code>STEGA_DATA_DIR</code>, by
            default <code>.stega</code>); Stega prints the file's path when it starts. The token is
            kept in this browser tab only (sessionStorage).
          </p>
          <input
            id={id}
            name="token"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={token}
            onChange={(e) => setToken(e.target.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
          />
          {error ? (
            <p className="field-error" id={`${id}-error`} role="alert">
              <span aria-hidden="true">⚠ </span>
              {error}
            </p>
          ) : null}
        </div>
        <button type="submit" className="secondary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in with the token'}
        </button>
      </form>
    </details>
  );
}
