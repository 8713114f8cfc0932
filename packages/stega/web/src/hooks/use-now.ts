import { useSyncExternalStore } from 'react';
import { serverNow } from '../api.js';

// One shared one-second clock for every countdown on the page.
const clockListeners = new Set<() => void>();
let clockTimer: ReturnType<typeof setInterval> | undefined;
let clockValue = serverNow();
function subscribeClock(listener: () => void) {
  clockListeners.add(listener);
  if (!clockTimer) {
    clockValue = serverNow();
    clockTimer = setInterval(() => {
      clockValue = serverNow();
      for (const l of clockListeners) l();
    }, 1000);
  }
  return () => {
    clockListeners.delete(listener);
    if (clockListeners.size === 0 && clockTimer) {
      clearInterval(clockTimer);
      clockTimer = undefined;
    }
  };
}

/** The server's time, updated every second. */
export function useNow(): number {
  return useSyncExternalStore(subscribeClock, () => clockValue);
}
