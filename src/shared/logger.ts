/**
 * The logging interface the stages depend on; observability/ provides the pino implementation.
 * Static messages, variables in the object: `log.info({ entity, count }, 'planned removals')`.
 */
export interface Logger {
  trace(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything (unit tests, library use). */
export const silentLogger: Logger = {
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
