import { clearToken, readToken } from './session.js';

/** One failing field of a 400 (or 409): a dotted path such as `weekly_hours.monday[1].end`. */
export interface Issue {
  path: string;
  message: string;
}

/** An error answer of the API, in its one error shape. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Issue[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Server time minus browser time, ms, from the last response's Date header. */
let clockOffset = 0;
/** The server's current time as best known: SLA countdowns count against it. */
export function serverNow(): number {
  return Date.now() + clockOffset;
}

/**
 * The CSRF token of the signed-in session (GET /api/session and the sign-in answers give it):
 * sent as X-CSRF-Token with every write the session cookie authenticates. Kept in memory only.
 */
let csrfToken: string | null = null;
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

const listeners = new Set<() => void>();
/** Called when the API refuses the token (401): the app signs out. */
export function onUnauthorized(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Calls the API as the signed-in browser: with the session cookie (and, on writes, the CSRF
 * token), or with the API token this tab signed in with. Parses JSON; throws ApiError for
 * 4xx/5xx.
 */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  options: {
    token?: string;
    signal?: AbortSignal;
    /** `no-cache`: revalidate with the last ETag (a 304 gives the cached body back). */
    cache?: RequestCache;
    /** A sign-in's own call: its 401 is a wrong credential, not a session that ended. */
    signingIn?: boolean;
    /**
     * The revision the change was made from (a schedule's or policy's `revision`), sent as
     * If-Match: when someone changed it since, the API refuses with 412 and writes nothing.
     */
    ifMatch?: number;
  } = {},
): Promise<T> {
  const token = options.token ?? readToken();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  else if (csrfToken && method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken;
  // a form (files) goes as multipart/form-data, its boundary set by the browser
  const isForm = typeof FormData !== 'undefined' && body instanceof FormData;
  if (body !== undefined && !isForm) headers['content-type'] = 'application/json';
  if (options.ifMatch !== undefined) headers['if-match'] = `"${options.ifMatch}"`;
  const sentAt = Date.now();
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: isForm ? (body as FormData) : JSON.stringify(body) } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.cache ? { cache: options.cache } : {}),
  });
  const date = response.headers.get('date');
  if (date) {
    // the Date header has whole seconds: keep the offset only when it is more than that
    const offset = Date.parse(date) + 500 - (sentAt + Date.now()) / 2;
    clockOffset = Math.abs(offset) > 1500 ? offset : 0;
  }
  const text = await response.text();
  const data = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const err = (data ?? {}) as { code?: string; message?: string; issues?: Issue[] };
    if (response.status === 401 && options.token === undefined && !options.signingIn) {
      clearToken();
      csrfToken = null;
      for (const listener of listeners) listener();
    }
    throw new ApiError(
      response.status,
      err.code ?? 'STEGA_ERR_HTTP',
      err.message ?? `${response.status} ${response.statusText}`,
      err.issues ?? [],
    );
  }
  return data as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A query string from the defined values: `?status=open,waiting&limit=50`. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}
