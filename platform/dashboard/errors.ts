/** A failure the dashboard shows to its user, in words, with the status the page answers. */
export class DashboardError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "DashboardError";
  }
}

/** What common Postgres error codes mean, for people who do not know them by heart. */
const POSTGRES_MEANINGS: Record<string, string> = {
  "23505": "A row with this value already exists (unique constraint)",
  "23514": "A check constraint refused the value",
  "23502": "A required value is missing (not-null constraint)",
  "23503": "It refers to a row that does not exist, or is still referred to (foreign key)",
  "22P02": "A value has the wrong format for its column",
  "22001": "A value is too long for its column",
  "42501": "Refused by row-level security or missing privileges",
  "42703": "There is no such column",
  "PGRST116": "No row matched",
  "PGRST204": "There is no such column",
};

function field(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  return typeof value === "string" && value.length > 0 ? value : null;
}

/**
 * An error answer from any service behind the gateway, in one sentence: PostgREST's
 * {code, message, details, hint}, GoTrue's {code, msg|message}, storage's {error, message},
 * pg-meta's {error}, the functions' {error, code} and the gamification API's
 * {error: {codigo, mensagem}}.
 */
export function errorInWords(body: unknown, status: number): string {
  if (typeof body === "string" && body.trim()) return `${body.trim().slice(0, 300)} (HTTP ${status})`;
  if (!body || typeof body !== "object") return `The request failed (HTTP ${status})`;
  const record = body as Record<string, unknown>;
  const nested = record.error && typeof record.error === "object" ? (record.error as Record<string, unknown>) : null;
  const message = field(record, "message") ?? field(record, "msg") ?? field(record, "error_description") ?? (nested && (field(nested, "message") ?? field(nested, "mensagem"))) ?? field(record, "error") ?? `The request failed (HTTP ${status})`;
  const code = field(record, "code") ?? (nested && (field(nested, "code") ?? field(nested, "codigo")));
  const meaning = code ? POSTGRES_MEANINGS[code] : undefined;
  const details = [field(record, "details"), field(record, "hint")].filter(Boolean).join(" ");
  return [meaning ? `${meaning}: ${message}` : message, details, code && !meaning ? `(${code})` : null].filter(Boolean).join(" ");
}
