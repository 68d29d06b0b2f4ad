import { Hono } from "hono";
import { html } from "hono/html";
import { readApiSettings } from "../../postgrest/postgrest.ts";
import { act, flashOf, formFields, invalid } from "../actions.ts";
import { confirmationPage, isConfirmed } from "../confirm.ts";
import { DashboardError } from "../errors.ts";
import { dataGrid, formattedJson, sortOf } from "../grid.ts";
import { cellText, layout } from "../layout.ts";
import type { MetaColumn, MetaPolicy, MetaTable } from "../pg-meta-types.ts";
import type { StackClient } from "../stack-client.ts";

/** Rows per page of the row view. */
const PAGE_SIZE = 25;

/** The filter operators the row view offers, as PostgREST spells them. */
const OPERATORS: Record<string, string> = { eq: "=", neq: "≠", gt: ">", gte: "≥", lt: "<", lte: "≤", ilike: "contains", is: "is (null/true/false)" };

/** Column types whose form values are JSON (objects, arrays). */
function isJsonColumn(column: MetaColumn): boolean {
  return column.data_type === "json" || column.data_type === "jsonb" || column.data_type === "ARRAY";
}

/** Columns Postgres fills itself (generated, or identity ALWAYS): shown, never sent. */
function isSystemFilled(column: MetaColumn): boolean {
  return column.is_generated || column.identity_generation === "ALWAYS";
}

/** The schemas PostgREST exposes ([api] schemas in config.toml). */
function exposedSchemas(): string[] {
  return readApiSettings().schemas;
}

async function tablesOf(stack: StackClient, schema: string): Promise<MetaTable[]> {
  const tables = await stack.json<MetaTable[]>(`/pg/tables?included_schemas=${encodeURIComponent(schema)}&include_columns=true`);
  return tables.sort((a, b) => a.name.localeCompare(b.name));
}

async function tableOf(stack: StackClient, schema: string, name: string): Promise<MetaTable> {
  if (!exposedSchemas().includes(schema)) throw new DashboardError(404, `The schema ${schema} is not exposed by the data API`);
  const table = (await tablesOf(stack, schema)).find((candidate) => candidate.name === name);
  if (!table) throw new DashboardError(404, `There is no table ${schema}.${name}`);
  return table;
}

/** The exact row count PostgREST reports, or null when the service role cannot read the table. */
async function rowCount(stack: StackClient, schema: string, table: string, filter = ""): Promise<number | null> {
  const response = await stack.fetch(`/rest/v1/${encodeURIComponent(table)}?select=*&limit=0${filter}`, {
    method: "HEAD",
    headers: { "accept-profile": schema, prefer: "count=exact" },
  });
  const total = /\/(\d+)$/.exec(response.headers.get("content-range") ?? "")?.[1];
  return response.ok && total !== undefined ? Number(total) : null;
}

/** The row view's filter, checked against the table's columns, as a PostgREST query fragment. */
function filterQuery(table: MetaTable, column: string | undefined, operator: string | undefined, value: string | undefined): string {
  if (!column) return "";
  if (!table.columns?.some((candidate) => candidate.name === column)) throw invalid(`There is no column ${column} to filter on`);
  if (!operator || !(operator in OPERATORS)) throw invalid(`Unknown filter operator ${operator ?? ""}`);
  const operand = operator === "ilike" ? `*${value ?? ""}*` : value ?? "";
  return `&${encodeURIComponent(column)}=${operator}.${encodeURIComponent(operand)}`;
}

/** A row's primary key as the hidden field and query parameter that identify it. */
function keyOf(table: MetaTable, row: Record<string, unknown>): string {
  return JSON.stringify(Object.fromEntries(table.primary_keys.map(({ name }) => [name, row[name]])));
}

/** PostgREST filters selecting exactly the row with this primary key. */
function keyFilter(table: MetaTable, key: string | undefined): string {
  if (table.primary_keys.length === 0) throw invalid(`${table.name} has no primary key, so its rows cannot be edited here`);
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(key ?? "") as Record<string, unknown>;
  } catch {
    throw invalid("The row's key is missing or malformed");
  }
  return table.primary_keys.map(({ name }) => {
    if (parsed[name] === undefined || parsed[name] === null) throw invalid(`The row's key has no ${name}`);
    return `${encodeURIComponent(name)}=eq.${encodeURIComponent(String(parsed[name]))}`;
  }).join("&");
}

/**
 * A form's values as a row for PostgREST: JSON columns parsed, empty fields left out of a new row
 * (so defaults apply) and set to NULL on an edited one. Every value is checked before anything is
 * sent, so a bad field writes nothing.
 */
function rowFromForm(table: MetaTable, fields: Record<string, string>, editing: boolean): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const column of table.columns ?? []) {
    const value = fields[`col:${column.name}`];
    if (value === undefined || isSystemFilled(column)) continue;
    if (value === "") {
      if (editing) {
        if (!column.is_nullable) throw invalid(`${column.name} cannot be empty (it is NOT NULL)`);
        row[column.name] = null;
      }
      continue;
    }
    if (isJsonColumn(column)) {
      try {
        row[column.name] = JSON.parse(value);
      } catch {
        throw invalid(`${column.name} must be JSON (${column.format})`);
      }
    } else if (column.data_type === "boolean") {
      if (value !== "true" && value !== "false") throw invalid(`${column.name} must be true or false`);
      row[column.name] = value === "true";
    } else {
      row[column.name] = value;
    }
  }
  if (!editing && Object.keys(row).length === 0 && (table.columns ?? []).every((column) => column.default_value === null && !column.is_identity && !column.is_generated)) {
    throw invalid("Fill in at least one field");
  }
  return row;
}

function rowForm(table: MetaTable, action: string, submit: string, row: Record<string, unknown> | null) {
  return html`<form method="post" action="${action}">
${(table.columns ?? []).map((column) => {
    const value = row ? (row[column.name] === null || row[column.name] === undefined ? "" : cellText(row[column.name])) : "";
    const filled = isSystemFilled(column);
    const hint = [column.format, column.is_nullable ? "" : "not null", filled ? "set by Postgres" : column.default_value !== null ? `default ${String(column.default_value)}` : ""].filter(Boolean).join(", ");
    // A disabled field is not submitted, so Postgres keeps filling it.
    return html`<label>${column.name} <small>(${hint})</small>
${isJsonColumn(column) ? html`<textarea name="col:${column.name}" rows="2"${filled ? " disabled" : ""}>${value}</textarea>` : html`<input name="col:${column.name}" value="${value}"${filled ? " disabled" : ""}>`}</label>`;
  })}
<button type="submit">${submit}</button>
</form>`;
}

/**
 * The table's policies in a panel that folds over the page's top rather than taking a column
 * beside the grid, so the grid keeps the page's whole width.
 */
function policyPanel(policies: MetaPolicy[]) {
  return html`<aside class="policies-panel" aria-labelledby="policies-heading"><details><summary><h2 id="policies-heading">Policies (${policies.length})</h2></summary>
${policies.length === 0 ? html`<p>No policies.</p>` : html`<ul class="policies">${policies.map((policy) => html`<li><strong>${policy.name}</strong><br><small>${policy.action} ${policy.command} to ${policy.roles.join(", ")}</small>
${policy.definition ? html`<br><small>using (<code>${policy.definition}</code>)</small>` : ""}${policy.check ? html`<br><small>with check (<code>${policy.check}</code>)</small>` : ""}</li>`)}</ul>`}</details></aside>`;
}

/** Every column of a row with its full value, JSON formatted: what the grid's cells cut short. */
function fullValues(table: MetaTable, row: Record<string, unknown>) {
  return html`<dl class="full-values">${(table.columns ?? []).map((column) => html`<dt>${column.name} <small>(${column.format})</small></dt><dd><pre class="json">${formattedJson(row[column.name])}</pre></dd>`)}</dl>`;
}

/**
 * Tables: every exposed schema's tables with their row counts, each table's rows paged and
 * filtered, sorted, inserted, edited and deleted (after a confirmation) as the service role through
 * the data API, in a grid that fits the screen, with its RLS policies (from pg-meta) in a panel.
 */
export function tablePages(stack: StackClient): Hono {
  const pages = new Hono();

  pages.get("/", async (c) => {
    const sections = await Promise.all(exposedSchemas().map(async (schema) => {
      const tables = await tablesOf(stack, schema);
      const counts = await Promise.all(tables.map((table) => rowCount(stack, schema, table.name)));
      return html`<section><h2>Schema ${schema}</h2>
${tables.length === 0 ? html`<p>No tables.</p>` : html`<table><thead><tr><th>Table</th><th>Rows</th><th>RLS</th><th>Description</th></tr></thead><tbody>
${tables.map((table, index) => html`<tr><td><a href="/tables/${schema}/${table.name}">${table.name}</a></td><td class="count">${counts[index] ?? "—"}</td><td>${table.rls_enabled ? "on" : "off"}</td><td>${table.comment ?? ""}</td></tr>`)}
</tbody></table>`}</section>`;
    }));
    return c.html(layout("Tables", "Tables", flashOf(c), html`${sections}`));
  });

  pages.get("/:schema/:table", async (c) => {
    const { schema, table: name } = c.req.param();
    const table = await tableOf(stack, schema, name);
    const { column, op, value } = c.req.query();
    const page = Math.max(1, Number.parseInt(c.req.query("page") ?? "1", 10) || 1);
    const filter = filterQuery(table, column, op, value);
    const columns = (table.columns ?? []).map((candidate) => candidate.name);
    const sort = sortOf(columns, c.req.query("sort"), c.req.query("dir"));
    // The primary key breaks ties, so paging through a sorted column neither repeats nor skips rows.
    const orderColumns = [...(sort ? [`${encodeURIComponent(sort.column)}.${sort.direction}`] : []), ...table.primary_keys.filter(({ name: key }) => key !== sort?.column).map(({ name: key }) => encodeURIComponent(key))];
    const order = orderColumns.length > 0 ? `&order=${orderColumns.join(",")}` : "";
    const response = await stack.fetch(`/rest/v1/${encodeURIComponent(name)}?select=*${filter}${order}&limit=${PAGE_SIZE}&offset=${(page - 1) * PAGE_SIZE}`, {
      headers: { "accept-profile": schema, prefer: "count=exact" },
    });
    const rows = await response.json() as Record<string, unknown>[] | Record<string, unknown>;
    const policies = (await stack.json<MetaPolicy[]>(`/pg/policies?included_schemas=${encodeURIComponent(schema)}`)).filter((policy) => policy.table === name);
    const total = Number(/\/(\d+)$/.exec(response.headers.get("content-range") ?? "")?.[1] ?? 0);
    const pagesCount = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const base = `/tables/${schema}/${name}`;
    const filterParams = column ? `&column=${encodeURIComponent(column)}&op=${encodeURIComponent(op ?? "")}&value=${encodeURIComponent(value ?? "")}` : "";
    const sortParams = sort ? `&sort=${encodeURIComponent(sort.column)}&dir=${sort.direction}` : "";
    const flash = flashOf(c);
    if (!response.ok) flash.error = `The rows could not be read: ${JSON.stringify(rows)}`;
    const list = Array.isArray(rows) ? rows : [];
    const grid = dataGrid({
      columns,
      rows: list,
      label: `Rows of ${schema}.${name}`,
      sorting: { base: `${base}?page=1${filterParams}`, current: sort },
      rowActions: table.primary_keys.length === 0 ? undefined : (row) => html`<a href="${base}/edit?key=${encodeURIComponent(keyOf(table, row))}">Edit</a>
<form method="post" action="${base}/delete"><input type="hidden" name="key" value="${keyOf(table, row)}"><button type="submit" class="secondary">Delete</button></form>`,
    });
    const content = html`<div class="table-bar"><p><a href="/tables">All tables</a> · ${schema}.${name} · RLS ${table.rls_enabled ? "on" : "off"}</p>${policyPanel(policies)}</div>
<form method="get" action="${base}" class="inline" role="search" aria-label="Filter rows">
<label>Column <select name="column">${columns.map((candidate) => html`<option${candidate === column ? " selected" : ""}>${candidate}</option>`)}</select></label>
<label>Operator <select name="op">${Object.entries(OPERATORS).map(([key, label]) => html`<option value="${key}"${key === op ? " selected" : ""}>${label}</option>`)}</select></label>
<label>Value <input name="value" value="${value ?? ""}"></label>
${sort ? html`<input type="hidden" name="sort" value="${sort.column}"><input type="hidden" name="dir" value="${sort.direction}">` : ""}
<button type="submit">Filter</button> ${column ? html`<a href="${base}">Clear filter</a>` : ""}
<span class="total">${total} row${total === 1 ? "" : "s"}${column ? " match" : ""} · page ${page} of ${pagesCount}
${page > 1 ? html` · <a href="${base}?page=${page - 1}${filterParams}${sortParams}">Previous</a>` : ""}${page < pagesCount ? html` · <a href="${base}?page=${page + 1}${filterParams}${sortParams}">Next</a>` : ""}</span>
</form>
${grid}
<details><summary>Insert a row</summary>${rowForm(table, `${base}/insert`, "Insert row", null)}</details>`;
    return c.html(layout(`${schema}.${name}`, "Tables", flash, content));
  });

  pages.get("/:schema/:table/edit", async (c) => {
    const { schema, table: name } = c.req.param();
    const table = await tableOf(stack, schema, name);
    const key = c.req.query("key");
    const rows = await stack.json<Record<string, unknown>[]>(`/rest/v1/${encodeURIComponent(name)}?select=*&${keyFilter(table, key)}`, { headers: { "accept-profile": schema } });
    if (rows.length === 0) throw new DashboardError(404, "That row no longer exists");
    const content = html`<p><a href="/tables/${schema}/${name}">Back to ${schema}.${name}</a></p>
<div class="row-view"><section aria-labelledby="full-heading"><h2 id="full-heading">Full values</h2>${fullValues(table, rows[0])}</section>
<section aria-labelledby="edit-heading"><h2 id="edit-heading">Edit</h2>${rowForm(table, `/tables/${schema}/${name}/edit?key=${encodeURIComponent(key ?? "")}`, "Save row", rows[0])}</section></div>`;
    return c.html(layout(`Edit a row of ${schema}.${name}`, "Tables", flashOf(c), content));
  });

  pages.post("/:schema/:table/insert", async (c) => {
    const { schema, table: name } = c.req.param();
    return await act(c, `/tables/${schema}/${name}`, async () => {
      const table = await tableOf(stack, schema, name);
      const row = rowFromForm(table, await formFields(c), false);
      await stack.json(`/rest/v1/${encodeURIComponent(name)}`, { method: "POST", json: row, headers: { "content-profile": schema, prefer: "return=minimal" } });
      return `Inserted a row into ${schema}.${name}`;
    });
  });

  pages.post("/:schema/:table/edit", async (c) => {
    const { schema, table: name } = c.req.param();
    const key = c.req.query("key");
    return await act(c, `/tables/${schema}/${name}/edit?key=${encodeURIComponent(key ?? "")}`, async () => {
      const table = await tableOf(stack, schema, name);
      const filter = keyFilter(table, key);
      const row = rowFromForm(table, await formFields(c), true);
      const updated = await stack.json<unknown[]>(`/rest/v1/${encodeURIComponent(name)}?${filter}`, { method: "PATCH", json: row, headers: { "content-profile": schema, prefer: "return=representation" } });
      if (updated.length === 0) throw new DashboardError(404, "That row no longer exists");
      return `Saved the row of ${schema}.${name}`;
    });
  });

  pages.post("/:schema/:table/delete", async (c) => {
    const { schema, table: name } = c.req.param();
    const fields = await formFields(c);
    const back = `/tables/${schema}/${name}`;
    if (!isConfirmed(fields)) {
      const table = await tableOf(stack, schema, name);
      const rows = await stack.json<Record<string, unknown>[]>(`/rest/v1/${encodeURIComponent(name)}?select=*&${keyFilter(table, fields.key)}`, { headers: { "accept-profile": schema } });
      if (rows.length === 0) return c.redirect(`${back}?error=${encodeURIComponent("That row no longer exists")}`, 303);
      return confirmationPage(c, fields, {
        title: `Delete this row of ${schema}.${name}?`,
        lost: html`<p>This row (${fields.key}) is deleted for good, with every value below; rows that refer to it may go with it (foreign keys on delete cascade).</p>${fullValues(table, rows[0])}`,
        button: "Delete row",
        back,
      });
    }
    return await act(c, back, async () => {
      const table = await tableOf(stack, schema, name);
      const deleted = await stack.json<unknown[]>(`/rest/v1/${encodeURIComponent(name)}?${keyFilter(table, fields.key)}`, { method: "DELETE", headers: { "content-profile": schema, prefer: "return=representation" } });
      if (deleted.length === 0) throw new DashboardError(404, "That row no longer exists");
      return `Deleted a row of ${schema}.${name}`;
    });
  });

  return pages;
}
