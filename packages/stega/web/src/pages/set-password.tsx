import { type FormEvent, useState } from 'react';
import { ApiError, api, type Issue } from '../api.js';
import { TextField } from '../components/form-fields.js';
import { useTitle } from '../hooks/use-title.js';
import type { Session } from '../types.js';

/** The emailed link's secret, from the address's fragment (never sent to the server in a URL). */
function linkOf(hash: string): { kind: 'invitation' | 'reset'; token: string } | undefined {
  const match = /^#(invitation|reset)=([A-Za-z0-9_-]+)$/.exec(hash);
  return match
    ? { kind: match[1] as 'invitation' | 'reset', token: match[2] as string }
    : undefined;
}

/**
 * Where the invitation and reset emails lead: set a password, once per link, and be signed in.
 * The link's secret is taken out of the address bar at once.
 */
export function SetPasswordPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [link] = useState(() => {
    const found = linkOf(window.location.hash);
    if (found) window.history.replaceState(null, '', window.location.pathname);
    return found;
  });
  useTitle(link?.kind === 'reset' ? 'Set a new password' : 'Welcome to Stega');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [issues, setIssues] = useState<Issue[]>([]);
  const [busy, setBusy] = useState(false);

  if (!link) {
    return (
      <main id="main" className="sign-in">
        <div className="sign-in-card">
          <h1>This link is incomplete</h1>
          <p>Open the link from your email as it is, or ask for a new one on the sign-in page.</p>
          <p>
            <a href="/tickets">Go to the sign-in page</a>
          </p>
        </div>
      </main>
    );
  }
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password !== again) {
      setIssues([{ path: 'again', message: 'is not the same password' }]);
      return;
    }
    setBusy(true);
    setIssues([]);
    try {
      const path = link.kind === 'invitation' ? '/api/auth/invitation' : '/api/auth/reset';
      const session = await api<Session>(
        'POST',
        path,
        { token: link.token, password },
        { signingIn: true },
      );
      window.history.replaceState(null, '', '/tickets');
      onSignedIn(session);
    } catch (error) {
      setIssues(
        error instanceof ApiError && error.issues.length > 0
          ? error.issues
          : [{ path: 'password', message: (error as Error).message }],
      );
    } finally {
      setBusy(false);
    }
  };
  const tokenIssue = issues.find((i) => i.path === 'token');
  return (
    <main id="main" className="sign-in">
      <div className="sign-in-card">
        <h1>{link.kind === 'reset' ? 'Set a new password' : 'Welcome to Stega'}</h1>
        {tokenIssue ? (
          <p className="notice error" role="alert">
            {tokenIssue.message}
          </p>
        ) : null}
        <form onSubmit={submit} noValidate aria-label="Set your password">
          <TextField
            path="password"
            label="New password"
            hint="At least 12 characters."
            issues={issues}
            value={password}
            onChange={setPassword}
            input={{ type: 'password', autoComplete: 'new-password', autoFocus: true }}
          />
          <TextField
            path="again"
            label="The same password again"
            issues={issues}
            value={again}
            onChange={setAgain}
            input={{ type: 'password', autoComplete: 'new-password' }}
          />
          <button type="submit" className="primary" disabled={busy}>
            Set password and sign in
          </button>
        </form>
      </div>
    </main>
  );
}
