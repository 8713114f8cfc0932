/**
 * The `Retry-After` header of an HTTP answer (RFC 9110, section 10.2.3): either delta-seconds
 * (`120`, one or more digits) or an HTTP-date. An HTTP-date is sent as the IMF-fixdate
 * (`Sun, 06 Nov 1994 08:49:37 GMT`); recipients also accept the two obsolete forms, RFC 850
 * (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`). Anything
 * else (a negative or fractional number, words, a date in another layout) is not a
 * Retry-After, and `retryAfterSeconds` says so with `undefined`: the caller then does what it
 * would have done without one. No dependency of the project parses this header, and
 * `Date.parse` is too lenient to be the check (it reads `2` as the year 2001).
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/** Longest delta-seconds read; longer digit strings are still "very far", not an error. */
const DIGITS_MAX = 15;

/**
 * Seconds from `now` (ms since the epoch: when the answer arrived) until the instant a
 * Retry-After value names; zero or negative for an HTTP-date in the past. `undefined` when
 * the value is missing or malformed. A header sent twice (`string[]`) is read by its first value.
 */
export function retryAfterSeconds(
  value: string | readonly string[] | undefined,
  now: number,
): number | undefined {
  const text = (typeof value === 'string' ? value : value?.[0])?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) {
    return text.length > DIGITS_MAX ? Number.MAX_SAFE_INTEGER : Number(text);
  }
  const at = httpDate(text, now);
  return at === undefined ? undefined : (at - now) / 1000;
}

/** An HTTP-date in any of its three forms, as ms since the epoch; undefined when it is none. */
export function httpDate(text: string, now: number): number | undefined {
  const parts = dateParts(text, now);
  if (!parts) return undefined;
  const { day, month, year, clock } = parts;
  const monthIndex = MONTHS.indexOf(month ?? '');
  const [h, min, s] = clock.map(Number) as [number, number, number];
  const d = Number(day);
  // 60 is a leap second; Date.UTC folds it into the next minute
  if (monthIndex < 0 || d < 1 || d > 31 || h > 23 || min > 59 || s > 60) return undefined;
  const at = Date.UTC(year, monthIndex, d, h, min, s);
  // 31 Feb and the like roll over into the next month: not a date
  if (new Date(at).getUTCDate() !== d && s !== 60) return undefined;
  return at;
}

interface DateParts {
  day: string | undefined;
  month: string | undefined;
  year: number;
  clock: (string | undefined)[];
}

function dateParts(text: string, now: number): DateParts | undefined {
  const fix = IMF_FIXDATE.exec(text);
  if (fix) return { day: fix[1], month: fix[2], year: Number(fix[3]), clock: fix.slice(4, 7) };
  const old = RFC_850.exec(text);
  if (old) {
    const year = twoDigitYear(Number(old[3]), now);
    return { day: old[1], month: old[2], year, clock: old.slice(4, 7) };
  }
  const asc = ASCTIME.exec(text);
  if (asc)
    return { day: asc[2]?.trim(), month: asc[1], year: Number(asc[6]), clock: asc.slice(3, 6) };
  return undefined;
}

/**
 * RFC 850's two-digit year, as RFC 9110 says: a year that would be more than 50 years in
 * the future is the most recent past year with the same last two digits.
 */
function twoDigitYear(yy: number, now: number): number {
  const current = new Date(now).getUTCFullYear();
  let year = Math.floor(current / 100) * 100 + yy;
  if (year > current + 50) year -= 100;
  return year;
}
