import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

/**
 * Query parameters whose values are credentials (the acknowledge link's `token`, OAuth's
 * `code` and `access_token`, signatures, keys, passwords): their values never reach a log.
 */
const SECRET_PARAM = /^(?:.*token.*|code|key|.*secret.*|password|passwd|sig|signature|auth)$/i;

/**
 * A request URL as a log line may show it: the value of every credential-like query
 * parameter (SECRET_PARAM) is `***`, the rest as it came.
 * `/acknowledge?token=7.first_response…` -> `/acknowledge?token=***`.
 */
export function urlForLog(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: judge the name as written
      }
      return SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=***` : pair;
    });
  return `${url.slice(0, at)}?${query.join('&')}`;
}

/**
 * What pino never writes, wherever it appears in a line: credentials in headers (an
 * Authorization bearer, the session cookie, the CSRF token, a Set-Cookie), at the top level
 * of a logged object or one level down (`req.headers`, `res.headers`, `err.headers`, …).
 */
export const LOG_REDACT: pino.redactOptions = {
  paths: ['authorization', 'cookie', 'set-cookie', 'x-csrf-token'].flatMap((name) => [
    `headers["${name}"]`,
    `*.headers["${name}"]`,
  ]),
  censor: '***',
};

/** `req` as pino writes it: method and URL (secret parameters masked), never the headers. */
const serializers = {
  req: (req: { method?: string; url?: string }) => ({
    method: req.method,
    url: req.url === undefined ? undefined : urlForLog(req.url),
  }),
};

/**
 * How log lines look: `pretty` (coloured, one line each, for a person at a terminal) or
 * `json` (one JSON object per line, for machines). `auto`: pretty when stdout is a TTY.
 */
export type LogFormat = 'auto' | 'pretty' | 'json';

/** Whether `format` comes out pretty on this process's stdout. */
export function isPretty(format: LogFormat): boolean {
  return format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
}

/**
 * The process logger, tagged with the process role: JSON lines on stdout (or `destination`),
 * or pino-pretty's one-line coloured form (run in this thread, synchronously, so nothing is
 * lost when the process exits right after a line). Credentials are redacted (LOG_REDACT,
 * and a logged `req`'s URL through urlForLog).
 */
export function createLogger(
  level: pino.LevelWithSilent,
  role: string,
  format: LogFormat = 'json',
  destination?: pino.DestinationStream,
): Logger {
  const options = { level, base: { role, pid: process.pid }, redact: LOG_REDACT, serializers };
  if (!isPretty(format)) return destination ? pino(options, destination) : pino(options);
  return pino(
    options,
    pretty({
      colorize: process.stdout.isTTY === true,
      sync: true,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname,role',
      messageFormat: '{role}: {msg}',
    }),
  );
}
