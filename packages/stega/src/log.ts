import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

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
 * The process logger, tagged with the process role: JSON lines on stdout, or pino-pretty's
 * one-line coloured form (run in this thread, synchronously, so nothing is lost when the
 * process exits right after a line).
 */
export function createLogger(
  level: pino.LevelWithSilent,
  role: string,
  format: LogFormat = 'json',
): Logger {
  const options = { level, base: { role, pid: process.pid } };
  if (!isPretty(format)) return pino(options);
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
