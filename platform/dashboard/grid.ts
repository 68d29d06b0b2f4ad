import { html } from "hono/html";
import { cellText, type Markup } from "./layout.ts";

/** How the grid's rows are ordered: a column and a direction, as the page's query carries them. */
export interface GridSort {
  column: string;
  direction: "asc" | "desc";
}

/** What the grid needs to draw sortable headers: the page's address without its sort. */
export interface GridSorting {
  /** The page's path and query (filter, nothing else), to which `sort` and `dir` are added. */
  base: string;
  current: GridSort | null;
}

/** A grid of rows: the table pages' and the SQL editor's one way of showing data. */
export interface GridOptions {
  columns: string[];
  rows: Record<string, unknown>[];
  /** Accessible name of the grid (a table's name, "Query results"). */
  label: string;
  sorting?: GridSorting;
  /** The last column's content for a row (links and buttons), or none. */
  rowActions?: (row: Record<string, unknown>) => Markup;
}

/** Longest text a cell carries; the full value is one click away (the row view, the title). */
const CELL_CHARACTERS = 200;

/** A value as JSON indented for reading, for the JSON viewer. */
export function formattedJson(value: unknown): string {
  return value !== null && typeof value === "object" ? JSON.stringify(value, null, 2) : cellText(value);
}

/** A sort read from a query, kept only when it names one of `columns`. */
export function sortOf(columns: string[], column: string | undefined, direction: string | undefined): GridSort | null {
  if (!column || !columns.includes(column)) return null;
  return { column, direction: direction === "desc" ? "desc" : "asc" };
}

function header(column: string, sorting: GridSorting | undefined): Markup {
  if (!sorting) return html`<th scope="col">${column}</th>`;
  const current = sorting.current?.column === column ? sorting.current.direction : null;
  const next = current === "asc" ? "desc" : "asc";
  const separator = sorting.base.includes("?") ? "&" : "?";
  const ariaSort = current === "asc" ? "ascending" : current === "desc" ? "descending" : "none";
  return html`<th scope="col" aria-sort="${ariaSort}"><a href="${sorting.base}${separator}sort=${encodeURIComponent(column)}&dir=${next}" title="Sort by ${column}">${column}${current === "asc" ? " ▲" : current === "desc" ? " ▼" : ""}</a></th>`;
}

/**
 * The data grid: fixed column widths and one-line cells cut with an ellipsis, so a page of rows
 * fits a screen whatever the values hold (UUIDs, JSON states); the grid scrolls inside its own
 * box, sideways and down, never the page. A cell's full value is its tooltip and, formatted, on the
 * row view the row actions lead to.
 */
export function dataGrid(options: GridOptions): Markup {
  const actions = options.rowActions;
  return html`<div class="grid-wrap" role="region" aria-label="${options.label}" tabindex="0"><table class="rows data-grid"><thead><tr>${options.columns.map((column) => header(column, options.sorting))}${actions ? html`<th scope="col" class="grid-actions"><span class="visually-hidden">Actions</span></th>` : ""}</tr></thead><tbody>
${options.rows.map((row) => html`<tr>${options.columns.map((column) => {
    const text = cellText(row[column]);
    const shown = text.length > CELL_CHARACTERS ? `${text.slice(0, CELL_CHARACTERS)}…` : text;
    return html`<td${row[column] === null || row[column] === undefined ? html` class="null"` : ""} title="${shown}">${shown}</td>`;
  })}${actions ? html`<td class="grid-actions">${actions(row)}</td>` : ""}</tr>`)}
</tbody></table></div>`;
}
