import { Hono } from "hono";
import { html } from "hono/html";
import { formFields, invalid } from "../actions.ts";
import { dataGrid } from "../grid.ts";
import { layout, type Markup } from "../layout.ts";
import { RESULT_ROWS_SHOWN, runStatement, type SqlFailure, STATEMENT_CHARACTERS } from "../sql-runner.ts";
import type { StackClient } from "../stack-client.ts";

/** Statements the history keeps, newest first. */
const HISTORY_SIZE = 20;

/** One statement the editor ran, for the history. */
interface HistoryEntry {
  statement: string;
  at: string;
  outcome: string;
}

function failureView(statement: string, failure: SqlFailure): Markup {
  const where = failure.position ? ` at character ${failure.position.character} (line ${failure.position.line}, column ${failure.position.column})` : "";
  const line = failure.position ? statement.split("\n")[failure.position.line - 1] ?? "" : "";
  return html`<div role="alert" class="error sql-error"><strong>${failure.code ? `ERROR ${failure.code}` : "ERROR"}${where}:</strong> ${failure.message}${failure.detail ? html`<br>Detail: ${failure.detail}` : ""}${failure.hint ? html`<br>Hint: ${failure.hint}` : ""}
${failure.position ? html`<pre class="sql-caret">${line}\n${" ".repeat(failure.position.column - 1)}^</pre>` : ""}</div>`;
}

/**
 * The SQL editor: a statement run as the service role through pg-meta's query endpoint, as
 * Studio's editor runs it, its rows in the tables' grid, Postgres' refusal with its code and
 * position, and the recent statements (kept by this dashboard process, gone when it restarts:
 * the local dashboard has no storage of its own and adds nothing under supabase/).
 */
export function sqlPages(stack: StackClient): Hono {
  const pages = new Hono();
  const history: HistoryEntry[] = [];

  const page = (statement: string, result: Markup) => {
    const content = html`<form method="post" action="/sql" aria-label="SQL editor">
<label for="statement">Statement <small>(runs as service_role; at most ${STATEMENT_CHARACTERS.toLocaleString("en")} characters)</small></label>
<textarea id="statement" name="statement" rows="6" class="sql" spellcheck="false" required>${statement}</textarea>
<button type="submit">Run</button>
</form>
${result}
<section aria-labelledby="history-heading"><h2 id="history-heading">Recent statements</h2>
${history.length === 0 ? html`<p>None yet.</p>` : html`<ol class="sql-history">${history.map((entry) => html`<li><form method="post" action="/sql" class="inline"><input type="hidden" name="statement" value="${entry.statement}"><code>${entry.statement.length > 160 ? `${entry.statement.slice(0, 160)}…` : entry.statement}</code> <small>${entry.at} · ${entry.outcome}</small> <button type="submit" class="secondary">Run again</button></form></li>`)}</ol>`}
</section>`;
    return layout("SQL editor", "SQL", {}, content);
  };

  pages.get("/", (c) => c.html(page("", html``)));

  pages.post("/", async (c) => {
    // Browsers send a textarea's line breaks as CRLF; Postgres' position counts characters, so the
    // text is taken as the person sees it, one character a line break.
    const statement = ((await formFields(c)).statement ?? "").replace(/\r\n/g, "\n").trim();
    if (!statement) throw invalid("Write a statement to run");
    if (statement.length > STATEMENT_CHARACTERS) throw invalid(`A statement has at most ${STATEMENT_CHARACTERS} characters`);
    const result = await runStatement(stack, statement);
    const outcome = result.ok ? `${result.rows.length} row${result.rows.length === 1 ? "" : "s"}` : `error ${result.code ?? ""}`.trim();
    history.unshift({ statement, at: new Date().toISOString(), outcome });
    history.splice(HISTORY_SIZE);
    if (!result.ok) return c.html(page(statement, failureView(statement, result)), 400);
    const columns = [...new Set(result.rows.flatMap((row) => Object.keys(row)))];
    const shown = result.rows.slice(0, RESULT_ROWS_SHOWN);
    return c.html(page(statement, html`<p role="status" class="notice">${outcome}${shown.length < result.rows.length ? `, the first ${RESULT_ROWS_SHOWN} shown` : ""}</p>
${result.rows.length === 0 ? "" : dataGrid({ columns, rows: shown, label: "Query results" })}`));
  });

  return pages;
}
