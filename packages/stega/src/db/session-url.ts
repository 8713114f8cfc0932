/**
 * The database URL every Stega process opens its sessions with: `url` plus PostgreSQL's
 * `idle_in_transaction_session_timeout` (config.databaseIdleTransactionSeconds) in its
 * `options`, so a session left idle inside a transaction that long — a process frozen,
 * stopped or cut off between two statements — is ended by the server and its row and
 * advisory locks go with it: a frozen process holds up the detector, the filer or a
 * delivery in the others for at most that long, and its own work is retried. A URL that
 * sets the timeout already keeps its own; 0 adds nothing.
 */
export function sessionUrl(url: string, idleTransactionSeconds: number): string {
  if (idleTransactionSeconds === 0) return url;
  const parsed = new URL(url);
  const options = parsed.searchParams.get('options') ?? '';
  if (options.includes('idle_in_transaction_session_timeout')) return url;
  parsed.searchParams.set(
    'options',
    `${options} -c idle_in_transaction_session_timeout=${idleTransactionSeconds * 1000}`.trim(),
  );
  return parsed.toString();
}
