import { useCallback, useEffect, useRef, useState } from 'react';
import { api, onUnauthorized } from './api.js';
import { displayZone, setDisplayZone } from './format.js';
import { AgentsPage } from './pages/agents.js';
import { CalendarEditPage, CalendarsPage } from './pages/calendars.js';
import { AlertBell, InboxPage } from './pages/inbox.js';
import { NotFoundPage } from './pages/not-found.js';
import { OperationsPage } from './pages/operations.js';
import { PoliciesPage, PolicyEditPage } from './pages/policies.js';
import { ReportsPage } from './pages/reports.js';
import { SignInPage } from './pages/sign-in.js';
import { TeamsPage } from './pages/teams.js';
import { TicketFormPage } from './pages/ticket-form.js';
import { TicketPage } from './pages/ticket-page.js';
import { TicketsPage } from './pages/tickets.js';
import { Link, match, navigate, useLocation } from './router.js';
import { clearToken, readToken } from './session.js';
import type { Session } from './types.js';

const NAV = [
  { to: '/tickets', label: 'Tickets', admin: false },
  { to: '/policies', label: 'SLA policies', admin: false },
  { to: '/calendars', label: 'Calendars', admin: false },
  { to: '/agents', label: 'Agents', admin: true },
  { to: '/teams', label: 'Teams', admin: false },
  { to: '/operations', label: 'Operations', admin: true },
  { to: '/reports', label: 'Reports', admin: false },
];

type SessionState = { status: 'checking' } | { status: 'out' } | { status: 'in'; session: Session };

/** The shell: sign-in gate, header with navigation, and the page for the current path. */
export function App() {
  const [state, setState] = useState<SessionState>(() =>
    readToken() ? { status: 'checking' } : { status: 'out' },
  );

  useEffect(() => {
    if (state.status !== 'checking') return;
    api<Session>('GET', '/api/session')
      .then((session) => {
        setDisplayZone(session.time_zone ?? undefined);
        setState({ status: 'in', session });
      })
      .catch(() => setState({ status: 'out' }));
  }, [state.status]);

  useEffect(() => onUnauthorized(() => setState({ status: 'out' })), []);

  const signOut = useCallback(() => {
    clearToken();
    setState({ status: 'out' });
    navigate('/sign-in');
  }, []);

  if (state.status === 'checking') {
    return (
      <main id="main" className="centered">
        <p>Signing in…</p>
      </main>
    );
  }
  if (state.status === 'out') {
    return (
      <SignInPage
        onSignedIn={(session) => {
          setDisplayZone(session.time_zone ?? undefined);
          setState({ status: 'in', session });
        }}
      />
    );
  }
  return <Shell session={state.session} onSignOut={signOut} />;
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const { path } = useLocation();
  const mainRef = useRef<HTMLElement>(null);
  const shownPath = useRef(path);

  // a new page moves the focus to its main heading, as a page load would
  useEffect(() => {
    if (shownPath.current === path) return;
    shownPath.current = path;
    const heading = mainRef.current?.querySelector('h1');
    if (heading) {
      heading.setAttribute('tabindex', '-1');
      heading.focus();
    }
    window.scrollTo(0, 0);
  }, [path]);

  useEffect(() => {
    if (path === '/' || path === '/sign-in') navigate('/tickets', { replace: true });
  }, [path]);

  const isAdmin = session.role === 'admin';
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <div className="brand">
          <Link to="/tickets">Stega</Link>
        </div>
        <nav aria-label="Main">
          <ul>
            {NAV.filter((item) => isAdmin || !item.admin).map((item) => (
              <li key={item.to}>
                <Link
                  to={item.to}
                  aria-current={
                    path === item.to || path.startsWith(`${item.to}/`) ? 'page' : undefined
                  }
                >
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <AlertBell current={path === '/inbox'} />
          <span>
            {session.name} <span className="muted">({session.role})</span>
          </span>
          <button type="button" className="link-button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        <Page path={path} session={session} />
      </main>
      <footer className="site-footer">
        <p className="muted">
          Stega · times in {displayZone()} ·{' '}
          <a href="/api/openapi.json">API description (OpenAPI)</a>
        </p>
      </footer>
    </>
  );
}

function Page({ path, session }: { path: string; session: Session }) {
  const admin = session.role === 'admin';
  if (path === '/' || path === '/sign-in' || path === '/tickets') {
    return <TicketsPage session={session} />;
  }
  if (path === '/tickets/new') return <TicketFormPage />;
  let params = match('/tickets/:id', path);
  if (params) return <TicketPage id={Number(params.id)} session={session} />;
  params = match('/tickets/:id/edit', path);
  if (params) return <TicketFormPage id={Number(params.id)} />;
  if (path === '/policies') return <PoliciesPage admin={admin} />;
  if (path === '/policies/new') return <PolicyEditPage admin={admin} />;
  params = match('/policies/:id', path);
  if (params) return <PolicyEditPage id={Number(params.id)} admin={admin} />;
  if (path === '/calendars') return <CalendarsPage admin={admin} />;
  if (path === '/calendars/new') return <CalendarEditPage admin={admin} />;
  params = match('/calendars/:id', path);
  if (params) return <CalendarEditPage id={Number(params.id)} admin={admin} />;
  if (path === '/inbox') return <InboxPage session={session} />;
  if (path === '/agents') return admin ? <AgentsPage /> : <NotFoundPage forbidden />;
  if (path === '/teams') return <TeamsPage admin={admin} />;
  if (path === '/operations') return admin ? <OperationsPage /> : <NotFoundPage forbidden />;
  if (path === '/reports') return <ReportsPage admin={admin} />;
  params = match('/reports/:id', path);
  if (params) return <ReportsPage admin={admin} id={Number(params.id)} />;
  return <NotFoundPage />;
}
