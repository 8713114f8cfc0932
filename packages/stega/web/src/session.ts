/**
 * A password sign-in is a session cookie the browser keeps (every tab shares it). An API token
 * (the admin token, break-glass) signed in with lives in sessionStorage instead: this tab
 * only, gone when it closes.
 */
const KEY = 'stega.token';

export function readToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // storage unavailable: nothing to clear
  }
}
