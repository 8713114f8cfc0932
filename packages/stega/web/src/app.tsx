import { useQueryClient } from '@tanstack/react-query';
import { Fragment, type ReactElement, useCallback, useEffect, useRef, useState } from 'react';
import { Link, Navigate, Route, Routes, useLocation, useNavigate, useParams } from 'react-router';
import { api, onUnauthorized, setCsrfToken } from './api.js';
import { useLiveConnected, useLiveUpdates } from './data/live.js';
import { displayZone, setDisplayZone } from './format.js';
import { AccountPage } from './pages/account.js';
import { AgentsPage } from './pages/agents.js';
import { CalendarEditPage } from './pages/calendars/form.js';
import { CalendarsPage } from './pages/calendars/list.js';
import { EscalationPoliciesPage } from './pages/escalations/index.js';
import { AlertBell, InboxPage } from './pages/inbox.js';
import { MailboxesPage } from './pages/mailboxes.js';
import { NotFoundPage } from './pages/not-found.js';
import { OperationsPage } from './pages/operations/index.js';
import { PolicyEditPage } from './pages/policies/form.js';
import { PoliciesPage } from './pages/policies/list.js';
import { ReachMePage } from './pages/reach-me.js';
import { ReportsPage } from './pages/reports.js';
import { OnCallNow, SchedulesPage } from './pages/schedules.js';
import { SetPasswordPage } from './pages/set-password.js';
import { SignInPage } from './pages/sign-in.js';
import { TeamsPage } from './pages/teams.js';
import { TicketPage } from './pages/ticket/index.js';
import { TicketFormPage } from './pages/ticket-form.js';
import { TicketsPage } from './pages/tickets.js';
import { clearToken } from './session.js';
import type { Session } from './types.js';

const NAV = [
  { to: '/tickets', label: 'Tickets', admin: false },
  { to: '/policies', label: 'SLA policies', admin: false },
  { to: '/escalation-policies', label: 'Escalations', admin: false },
  { to: '/calendars', label: 'Calendars', admin: false },
  { to: '/schedules', label: 'Schedules', admin: false },
  { to: '/agents', label: 'Agents', admin: true },
  { to: '/teams', label: 'Teams', admin: false },
  { to: '/mailboxes', label: 'Mailboxes', admin: true },
  { to: '/operations', label: 'Operations', admin: true },
  { to: '/reports', label: 'Reports', admin: false },
];

type SessionState = { status: 'checking' } | { status: 'out' } | { status: 'in'; session: Session };

/**
 * The shell: sign-in gate, header with navigation, and the page for the current path. A
 * password sign-in is the session cookie every tab shares: a link opened in a new tab finds
 * it (GET /api/session) and needs no sign-in; signing out ends it for every tab.
 */
export function App() {
  const [state, setState] = useState<SessionState>({ status: 'checking' });
  const signedIn = useCallback((session: Session) => {
    setCsrfToken(session.csrf_token);
    setDisplayZone(session.time_zone ?? undefined);
    setState({ status: 'in', session });
  }, []);

  useEffect(() => {
    if (state.status !== 'checking') return;
    api<Session>('GET', '/api/session')
      .then(signedIn)
      .catch(() => setState({ status: 'out' }));
  }, [state.status, signedIn]);

  // another token's answers must not show: the cache goes with the session
  const queryClient = useQueryClient();
  useEffect(
    () =>
      onUnauthorized(() => {
        queryClient.clear();
        setState({ status: 'out' });
      }),
    [queryClient],
  );

  const navigate = useNavigate();
  const via = state.status === 'in' ? state.session.via : undefined;
  const signOut = useCallback(async () => {
    // a session ends on the server, for every tab; a token only leaves this tab
    if (via === 'session') await api('POST', '/api/auth/sign-out').catch(() => undefined);
    clearToken();
    setCsrfToken(null);
    queryClient.clear();
    setState({ status: 'out' });
    navigate('/sign-in');
  }, [navigate, queryClient, via]);

  const path = useLocation().pathname;
  if (path === '/set-password') {
    return (
      <SetPasswordPage
        onSignedIn={(session) => {
          queryClient.clear();
          signedIn(session);
          navigate('/tickets', { replace: true });
        }}
      />
    );
  }
  if (state.status === 'checking') {
    return (
      <main id="main" className="centered">
        <p>Signing in…</p>
      </main>
    );
  }
  if (state.status === 'out') {
    return <SignInPage onSignedIn={signedIn} />;
  }
  return <Shell session={state.session} onSignOut={signOut} />;
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => Promise<void> }) {
  const path = useLocation().pathname;
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

  const isAdmin = session.role === 'admin';
  useLiveUpdates(session.via === 'session');
  const live = useLiveConnected();
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
          {live ? (
            <span
              className="live-badge"
              title="New mail and changes to tickets show as they happen"
            >
              Live
            </span>
          ) : null}
          <OnCallNow />
          <AlertBell current={path === '/inbox'} />
          <Link to="/reach-me" aria-current={path === '/reach-me' ? 'page' : undefined}>
            How to reach me
          </Link>
          <Link to="/account" aria-current={path === '/account' ? 'page' : undefined}>
            {session.name} <span className="muted">({session.role})</span>
          </Link>
          <button type="button" className="link-button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        <Page session={session} />
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

/** Every page of the app by its address (deep links load through the server's UI route). */
function Page({ session }: { session: Session }) {
  const admin = session.role === 'admin';
  const readsReports = admin || session.role === 'supervisor';
  const adminOnly = (page: ReactElement) => (admin ? page : <NotFoundPage forbidden />);
  return (
    <Routes>
      <Route path="/" element={<Navigate to="/tickets" replace />} />
      <Route path="/sign-in" element={<Navigate to="/tickets" replace />} />
      <Route path="/tickets" element={<TicketsPage session={session} />} />
      <Route path="/tickets/new" element={<TicketFormPage />} />
      <Route
        path="/tickets/:id"
        element={<WithId render={(id) => <TicketPage id={id} session={session} />} />}
      />
      <Route
        path="/tickets/:id/edit"
        element={<WithId render={(id) => <TicketFormPage id={id} />} />}
      />
      <Route path="/policies" element={<PoliciesPage admin={admin} />} />
      <Route path="/policies/new" element={<PolicyEditPage admin={admin} />} />
      <Route
        path="/policies/:id"
        element={<WithId render={(id) => <PolicyEditPage id={id} admin={admin} />} />}
      />
      <Route path="/escalation-policies" element={<EscalationPoliciesPage admin={admin} />} />
      <Route path="/calendars" element={<CalendarsPage admin={admin} />} />
      <Route path="/calendars/new" element={<CalendarEditPage admin={admin} />} />
      <Route
        path="/calendars/:id"
        element={<WithId render={(id) => <CalendarEditPage id={id} admin={admin} />} />}
      />
      <Route path="/schedules" element={<SchedulesPage />} />
      <Route path="/inbox" element={<InboxPage session={session} />} />
      <Route path="/account" element={<AccountPage session={session} />} />
      <Route path="/reach-me" element={<ReachMePage session={session} />} />
      <Route path="/agents" element={adminOnly(<AgentsPage />)} />
      <Route path="/teams" element={<TeamsPage admin={admin} />} />
      <Route path="/mailboxes" element={adminOnly(<MailboxesPage />)} />
      <Route path="/operations" element={adminOnly(<OperationsPage />)} />
      <Route path="/reports" element={<ReportsPage admin={admin} readsReports={readsReports} />} />
      <Route
        path="/reports/:id"
        element={
          <WithId
            render={(id) => <ReportsPage admin={admin} readsReports={readsReports} id={id} />}
          />
        }
      />
      <Route path="*" element={<NotFoundPage />} />
    </Routes>
  );
}

/** The page of the `:id` in the address; a new id is a new page (its state starts over). */
function WithId({ render }: { render: (id: number) => ReactElement }) {
  const { id = '' } = useParams();
  return <Fragment key={id}>{render(Number(id))}</Fragment>;
}
