/**
 * The one structured logger of the edge functions: a JSON line per event, which the local
 * functions host and Supabase's log explorer both keep. Errors and warnings go to stderr, the rest
 * to stdout, so the hosted runtime files them under the right level.
 *
 * Every line has the project's one field set (`time`, `level`, `service`, `message`, then
 * `request_id` when the request carried one, then the event's fields; docs/http-toolkit.md), which
 * the platform's own processes write too (platform/log/logger.ts, through `formatLogLine`). An edge
 * function's message is a snake_case event name. Secrets never reach a line: fields whose name says
 * credential (authorization, apikey, password, token, secret, cookie...) are replaced, at any
 * depth, and so is any string value that looks like a JWT or a Supabase secret key, whatever its
 * field is called.
 */

/** Severity of a line. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Writes events for one service (and, for a request logger, one request). */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line. */
  with(fields: Record<string, unknown>): Logger;
}

/** Where a finished line goes; the default writes to the console. */
export type LineSink = (level: LogLevel, line: string) => void;

/** What replaces a secret. */
export const REDACTED = "[redacted]";

const SECRET_NAME = /authorization|api[-_]?key|passw(or)?d|token|secret|cookie|jwt|credential|^pwd$/i;
/** A compact JWT, or a Supabase secret key (`sb_secret_...`). */
const SECRET_VALUE = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|sb_secret_[A-Za-z0-9_-]+/g;
const MAX_DEPTH = 6;

/** A copy of `value` with every secret replaced by REDACTED (see the module comment). */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.replace(SECRET_VALUE, REDACTED);
  if (value instanceof Error) return { name: value.name, message: redact(value.message) };
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value instanceof Headers) return redact(Object.fromEntries(value), depth);
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, SECRET_NAME.test(name) ? REDACTED : redact(item, depth + 1)]));
}

/**
 * One event as a JSON line: `time`, `level`, `service` and `message` first, then the event's own
 * fields, which can not replace those four (a field named `message` would hide what happened).
 */
export function formatLogLine(service: string, level: string, message: string, fields: Record<string, unknown> = {}, now = new Date()): string {
  const head = { time: now.toISOString(), level, service, message };
  // Spread twice: the head's keys keep their place in front and their values win.
  return JSON.stringify({ ...head, ...fields, ...head });
}

const consoleSink: LineSink = (level, line) => {
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
};

/** A logger for `service`; `fields` are added to every line. */
export function createLogger(service: string, fields: Record<string, unknown> = {}, sink: LineSink = consoleSink): Logger {
  const write = (level: LogLevel, message: string, extra: Record<string, unknown> = {}) => {
    sink(level, formatLogLine(service, level, message, redact({ ...fields, ...extra }) as Record<string, unknown>));
  };
  return {
    debug: (message, extra) => write("debug", message, extra),
    info: (message, extra) => write("info", message, extra),
    warn: (message, extra) => write("warn", message, extra),
    error: (message, extra) => write("error", message, extra),
    with: (extra) => createLogger(service, { ...fields, ...extra }, sink),
  };
}

/** The id the gateway gave this request (Supabase sends `sb-request-id`; the local gateway both). */
export function requestIdOf(request: Request): string | null {
  return request.headers.get("sb-request-id") ?? request.headers.get("x-request-id");
}

/** A logger for one request: the service's, with the request id, method and path on every line. */
export function requestLogger(logger: Logger, request: Request): Logger {
  const requestId = requestIdOf(request);
  return logger.with({ ...(requestId ? { request_id: requestId } : {}), method: request.method, path: new URL(request.url).pathname });
}
