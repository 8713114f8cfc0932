/**
 * The logging seam: a subset of pino's interface, so a pino logger (or a child of one)
 * can be passed as is. Each call is `(fields, message)`.
 */
export interface Logger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

/** The default logger: drops everything. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
