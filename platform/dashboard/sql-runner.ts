import type { StackClient } from "./stack-client.ts";

/** Longest statement the editor sends (characters); pg-meta and Postgres take more, a page should not. */
export const STATEMENT_CHARACTERS = 100_000;
/** Rows of a result the grid shows; the rest are counted, not drawn. */
export const RESULT_ROWS_SHOWN = 500;

/**
 * Put before the statement so it runs as the service role, as the dashboard's every other action
 * does, rather than as pg-meta's own login (a superuser). `set local` ends with the statement's
 * implicit transaction, so the pooled connection goes back as it came.
 */
const AS_SERVICE_ROLE = "set local role service_role;\n";

/** A statement's rows, as pg-meta answers them (the last statement's that returned any). */
export interface SqlRows {
  ok: true;
  rows: Record<string, unknown>[];
}

/** Postgres' refusal, placed in the statement the person wrote. */
export interface SqlFailure {
  ok: false;
  message: string;
  /** SQLSTATE, e.g. 42P01; null when the failure was not Postgres' (pg-meta, the network). */
  code: string | null;
  /** 1-based character of the statement Postgres points at, with its line and column. */
  position: { character: number; line: number; column: number } | null;
  detail: string | null;
  hint: string | null;
}

/** Where a 1-based character offset falls in `text`, as line and column (both 1-based). */
export function lineAndColumn(text: string, character: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, character - 1)).split("\n");
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

/**
 * Runs one statement (or several, separated by semicolons) through pg-meta's /query, the endpoint
 * Studio's SQL editor uses, as the service role. A refusal comes back with Postgres' code and the
 * position in the person's own text (the role prefix taken off).
 */
export async function runStatement(stack: StackClient, statement: string): Promise<SqlRows | SqlFailure> {
  const response = await stack.fetch("/pg/query", { method: "POST", json: { query: `${AS_SERVICE_ROLE}${statement}` } });
  const body = await response.json().catch(() => null) as unknown;
  if (response.ok && Array.isArray(body)) return { ok: true, rows: body as Record<string, unknown>[] };
  const record = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
  const raw = Number(record.position);
  const character = Number.isInteger(raw) && raw > AS_SERVICE_ROLE.length ? raw - AS_SERVICE_ROLE.length : null;
  return {
    ok: false,
    message: text(record.message) ?? text(record.error) ?? `pg-meta answered HTTP ${response.status}`,
    code: text(record.code),
    position: character === null ? null : { character, ...lineAndColumn(statement, character) },
    detail: text(record.detail),
    hint: text(record.hint),
  };
}
