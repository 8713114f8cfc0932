import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { ApiError, api, type Issue, setCsrfToken } from '../api.js';
import { TextField } from '../components/form-fields.js';
import { useTitle } from '../hooks/use-title.js';
import type { Session } from '../types.js';

/**
 * Your account: change your password (every other session of yours ends), and set up or
 * remove a TOTP second factor for password sign-ins.
 */
export function AccountPage({ session }: { session: Session }) {
  useTitle('Your account');
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [issues, setIssues] = useState<Issue[]>([]);
  const [done, setDone] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setIssues([]);
    setDone(false);
    try {
      const renewed = await api<Session>('POST', '/api/auth/password', {
        current_password: current,
        new_password: next,
      });
      // this browser's session started anew: the new CSRF token goes with it
      setCsrfToken(renewed.csrf_token);
      setCurrent('');
      setNext('');
      setDone(true);
    } catch (error) {
      setIssues(
        error instanceof ApiError && error.issues.length > 0
          ? error.issues
          : [{ path: 'new_password', message: (error as Error).message }],
      );
    }
  };
  return (
    <div className="page narrow-page">
      <h1>Your account</h1>
      <p>
        {session.name} ({session.role})
      </p>
      {session.agent_id === null ? (
        <p className="muted">This credential belongs to no agent: it has no password.</p>
      ) : (
        <form onSubmit={submit} noValidate className="form" aria-label="Change your password">
          <h2>Change your password</h2>
          {done ? (
            <p className="notice ok" role="status">
              Password changed. Your other sessions have ended.
            </p>
          ) : null}
          <TextField
            path="current_password"
            label="Current password"
            issues={issues}
            value={current}
            onChange={setCurrent}
            input={{ type: 'password', autoComplete: 'current-password' }}
          />
          <TextField
            path="new_password"
            label="New password"
            hint="At least 12 characters."
            issues={issues}
            value={next}
            onChange={setNext}
            input={{ type: 'password', autoComplete: 'new-password' }}
          />
          <div className="actions">
            <button type="submit" className="primary">
              Change password
            </button>
          </div>
        </form>
      )}
      {session.agent_id === null ? null : <SecondFactorSection />}
    </div>
  );
}

interface SecondFactorStatus {
  enabled: boolean;
  recovery_codes_left: number;
}
interface Enrolment {
  secret: string;
  otpauth_uri: string;
  qr_svg: string;
}

/** The secret in groups of four, easier to type into an app. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

/**
 * The TOTP second factor: set it up (the secret shown once as a QR code and as text,
 * confirmed by a first code, then the recovery codes shown once), or remove it with a code.
 */
function SecondFactorSection() {
  const [status, setStatus] = useState<SecondFactorStatus | undefined>();
  const [enrolment, setEnrolment] = useState<Enrolment | undefined>();
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | undefined>();
  const [code, setCode] = useState('');
  const [issues, setIssues] = useState<Issue[]>([]);
  const [done, setDone] = useState<string | undefined>();
  const load = useCallback(async () => {
    setStatus(await api<SecondFactorStatus>('GET', '/api/auth/totp'));
  }, []);
  useEffect(() => {
    load().catch(() => undefined);
  }, [load]);
  const attempt = async (work: () => Promise<void>) => {
    setIssues([]);
    setDone(undefined);
    try {
      await work();
    } catch (error) {
      setIssues(
        error instanceof ApiError && error.issues.length > 0
          ? error.issues
          : [{ path: 'code', message: (error as Error).message }],
      );
    }
  };
  const begin = () =>
    attempt(async () => {
      setEnrolment(await api<Enrolment>('POST', '/api/auth/totp/enrolment'));
      setCode('');
    });
  const confirm = (event: FormEvent) => {
    event.preventDefault();
    return attempt(async () => {
      const confirmed = await api<{ recovery_codes: string[] }>(
        'POST',
        '/api/auth/totp/enrolment/confirm',
        { code: code.trim() },
      );
      setEnrolment(undefined);
      setRecoveryCodes(confirmed.recovery_codes);
      setCode('');
      await load();
    });
  };
  const remove = (event: FormEvent) => {
    event.preventDefault();
    return attempt(async () => {
      await api('POST', '/api/auth/totp/remove', { code: code.trim() });
      setCode('');
      setDone('Second factor removed: your password alone signs you in.');
      await load();
    });
  };
  const codeField = (
    <TextField
      path="code"
      label="Code"
      hint="The 6-digit code your authenticator app shows for Stega now."
      issues={issues}
      value={code}
      onChange={setCode}
      input={{ autoComplete: 'one-time-code', inputMode: 'numeric', spellCheck: false }}
    />
  );
  return (
    <section className="form second-factor" aria-labelledby="second-factor-heading">
      <h2 id="second-factor-heading">Second factor</h2>
      <p className="muted">
        With a second factor, signing in with your password also asks for a code from an
        authenticator app on your phone. Signing in with single sign-on asks for none here: your
        provider does its own.
      </p>
      {done ? (
        <p className="notice ok" role="status">
          {done}
        </p>
      ) : null}
      {recoveryCodes ? (
        <div className="notice ok" role="status">
          <p>
            <strong>Second factor set up.</strong> These recovery codes each sign you in once in
            place of a code, if you lose your phone. Keep them somewhere safe: they are shown only
            now.
          </p>
          <ul className="recovery-codes" aria-label="Recovery codes">
            {recoveryCodes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
          <button type="button" className="secondary" onClick={() => setRecoveryCodes(undefined)}>
            I have kept them
          </button>
        </div>
      ) : null}
      {status === undefined ? null : status.enabled ? (
        recoveryCodes ? null : (
          <form onSubmit={remove} noValidate aria-label="Remove your second factor">
            <p>
              Password sign-ins ask for a code. {status.recovery_codes_left} recovery code
              {status.recovery_codes_left === 1 ? '' : 's'} left.
            </p>
            {codeField}
            <div className="actions">
              <button type="submit" className="danger">
                Remove second factor
              </button>
            </div>
          </form>
        )
      ) : enrolment ? (
        <form onSubmit={confirm} noValidate aria-label="Confirm your second factor">
          <p>
            Scan this QR code with your authenticator app, or type the key into it. Then enter the
            code it shows.
          </p>
          <img
            className="totp-qr"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(enrolment.qr_svg)}`}
            alt="QR code of your second factor's key"
            width={180}
            height={180}
          />
          <p>
            Key: <code data-testid="totp-secret">{grouped(enrolment.secret)}</code>
          </p>
          {codeField}
          <div className="actions">
            <button type="submit" className="primary">
              Confirm and turn on
            </button>
            <button type="button" className="secondary" onClick={() => setEnrolment(undefined)}>
              Not now
            </button>
          </div>
        </form>
      ) : (
        <div className="actions">
          <button type="button" className="secondary" onClick={begin}>
            Set up a second factor
          </button>
          {issues.length > 0 ? (
            <p className="field-error" role="alert">
              {issues.map((i) => i.message).join('; ')}
            </p>
          ) : null}
        </div>
      )}
    </section>
  );
}
