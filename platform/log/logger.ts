import { formatLogLine as logLine } from "../../supabase/functions/_shared/http/logger.ts";

/**
 * The platform's one structured logger: one JSON line per event, written by the edge functions'
 * line formatter so platform processes and functions share one field set (`time`, `level`,
 * `service`, `message`, then the event's own fields; docs/http-toolkit.md), and one reader (a test,
 * `jq`, a person with `grep`) understands every log in `.orbita/<profile>/logs/`. Info lines go to
 * stdout and the rest to stderr; the supervisor appends both to the service's log file. Unlike the
 * functions' logger, it keeps an Error's stack: these logs stay on the machine.
 *
 * Only `console` is used, so the module runs under Node (the platform server, the workers) and under
 * Deno (the functions host) alike.
 */

/** How serious an event is. */
export type LogLevel = "info" | "warn" | "error";

/** An event's own fields; an Error among them is written with its name, message and stack. */
export type LogFields = Record<string, unknown>;

/** Writes events for one service. */
export interface Logger {
  log(level: LogLevel, message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** An Error as JSON keeps it: JSON.stringify would drop its message and stack (they are not own enumerable fields). */
function describeError(error: Error): Record<string, unknown> {
  return { ...error, name: error.name, message: error.message, stack: error.stack };
}

/** The line for one event; exported so its shape can be tested without capturing the console. */
export function formatLogLine(service: string, level: LogLevel, message: string, fields: LogFields = {}, now = new Date()): string {
  const own = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, value instanceof Error ? describeError(value) : value]));
  return logLine(service, level, message, own, now);
}

/** The logger of `service` (e.g. "auth", "storage", "functions", "queue-workers"). */
export function createLogger(service: string): Logger {
  const log = (level: LogLevel, message: string, fields?: LogFields) => {
    const line = formatLogLine(service, level, message, fields);
    if (level === "info") console.log(line);
    else console.error(line);
  };
  return {
    log,
    info: (message, fields) => log("info", message, fields),
    warn: (message, fields) => log("warn", message, fields),
    error: (message, fields) => log("error", message, fields),
  };
}
