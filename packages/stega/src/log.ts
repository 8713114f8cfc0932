import pino from 'pino';

export type Logger = pino.Logger;

/** The process logger: JSON lines on stdout, tagged with the process role. */
export function createLogger(level: pino.LevelWithSilent, role: string): Logger {
  return pino({ level, base: { role, pid: process.pid } });
}
