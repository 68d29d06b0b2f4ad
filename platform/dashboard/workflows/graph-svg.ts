import { html } from "hono/html";
import type { Markup } from "../layout.ts";

/** The parts of a workflow state (workflows.state, workflow_deployments.state) the drawing reads. */
export interface DrawnState {
  blocks: Record<string, { id?: string; type: string; name?: string; enabled?: boolean; parentId?: string | null; data?: { parentId?: string | null }; config?: unknown }>;
  edges: { source: string; target: string; sourceHandle?: string | null }[];
}

/** Where each block sits: its column (longest path from a block nothing leads to) and row. */
export interface GraphLayout {
  positions: Map<string, { column: number; row: number }>;
  columns: number;
  rows: number;
}

const BOX_WIDTH = 160;
const BOX_HEIGHT = 46;
const GAP_X = 110;
const GAP_Y = 24;
const MARGIN = 16;

/**
 * Lays blocks out left to right: a block's column is the length of the longest chain of edges
 * leading to it (cycles, which the validator refuses anyway, are cut where they close); the first
 * column keeps the state's order and each later block sits in the row order of its sources.
 */
export function layoutGraph(state: DrawnState): GraphLayout {
  const ids = Object.keys(state.blocks);
  const incoming = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const edge of state.edges) {
    if (incoming.has(edge.target) && incoming.has(edge.source)) incoming.get(edge.target)?.push(edge.source);
  }
  const column = new Map<string, number>();
  const visiting = new Set<string>();
  const depth = (id: string): number => {
    const known = column.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const sources = incoming.get(id) ?? [];
    const value = sources.length === 0 ? 0 : Math.max(...sources.map((source) => depth(source) + 1));
    visiting.delete(id);
    column.set(id, value);
    return value;
  };
  const byColumn: string[][] = [];
  for (const id of ids) (byColumn[depth(id)] ??= []).push(id);
  const positions = new Map<string, { column: number; row: number }>();
  byColumn.forEach((members, at) => {
    // Beside the blocks that lead to them, so few arrows cross.
    const rowOf = (id: string) => Math.min(Infinity, ...(incoming.get(id) ?? []).map((source) => positions.get(source)?.row ?? Infinity));
    const ordered = at === 0 ? members : [...members].sort((a, b) => rowOf(a) - rowOf(b));
    ordered.forEach((id, row) => positions.set(id, { column: at, row }));
  });
  return { positions, columns: byColumn.length, rows: Math.max(0, ...byColumn.map((members) => members?.length ?? 0)) };
}

/** Longest edge label drawn; the block's config below the graph has the whole expression. */
const LABEL_CHARACTERS = 28;

function shorten(text: string): string {
  return text.length > LABEL_CHARACTERS ? `${text.slice(0, LABEL_CHARACTERS - 1)}…` : text;
}

/**
 * What an edge's source handle means in words, so a Condition's or Router's branches can be told
 * apart: `if <expression>`, `else`, a route's title (or its operator and operand), `error`; null
 * for a plain edge.
 */
export function edgeLabel(state: DrawnState, edge: DrawnState["edges"][number]): string | null {
  const handle = edge.sourceHandle ?? "";
  if (handle === "error") return "error";
  const config = (state.blocks[edge.source]?.config ?? {}) as { conditions?: { id: string; kind: string; expression?: string }[]; routes?: { id: string; title?: string; operator: string; operand?: unknown }[] };
  if (handle.startsWith("condition-")) {
    const condition = config.conditions?.find((candidate) => candidate.id === handle.slice("condition-".length));
    if (!condition) return handle;
    return shorten(condition.kind === "else" || !condition.expression ? condition.kind : `${condition.kind} ${condition.expression}`);
  }
  if (handle.startsWith("router-")) {
    const route = config.routes?.find((candidate) => candidate.id === handle.slice("router-".length));
    if (!route) return handle;
    if (route.title) return shorten(route.title);
    return shorten(route.operand === undefined ? route.operator : `${route.operator} ${typeof route.operand === "string" ? route.operand : JSON.stringify(route.operand)}`);
  }
  return null;
}

/** A workflow's graph as a read-only SVG: one box per block (name and type), one arrow per edge. */
export function graphSvg(state: DrawnState, label: string): Markup {
  const layout = layoutGraph(state);
  const width = MARGIN * 2 + Math.max(1, layout.columns) * (BOX_WIDTH + GAP_X) - GAP_X;
  const height = MARGIN * 2 + Math.max(1, layout.rows) * (BOX_HEIGHT + GAP_Y) - GAP_Y;
  const corner = (id: string) => {
    const position = layout.positions.get(id) ?? { column: 0, row: 0 };
    return { x: MARGIN + position.column * (BOX_WIDTH + GAP_X), y: MARGIN + position.row * (BOX_HEIGHT + GAP_Y) };
  };
  const edges = state.edges.filter((edge) => layout.positions.has(edge.source) && layout.positions.has(edge.target)).map((edge) => {
    const from = corner(edge.source);
    const to = corner(edge.target);
    const kind = edge.sourceHandle === "error" ? "error" : "flow";
    const label = edgeLabel(state, edge);
    const [x1, y1, x2, y2] = [from.x + BOX_WIDTH, from.y + BOX_HEIGHT / 2, to.x, to.y + BOX_HEIGHT / 2];
    // Halfway along, where branches leaving one block toward different rows are furthest apart.
    const [lx, ly] = [(x1 + x2) / 2, (y1 + y2) / 2];
    return html`<line class="edge ${kind}" data-source="${edge.source}" data-target="${edge.target}" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${kind === "error" ? "#c62828" : "#555"}" stroke-width="1.5" marker-end="url(#arrow)"/>${label ? html`<text class="edge-label" data-source="${edge.source}" data-target="${edge.target}" x="${lx}" y="${ly - 4}" font-size="11" text-anchor="middle" fill="${kind === "error" ? "#b71c1c" : "#222"}" paint-order="stroke" stroke="#fafafa" stroke-width="4">${label}</text>` : ""}`;
  });
  const boxes = Object.entries(state.blocks).map(([id, block]) => {
    const { x, y } = corner(id);
    return html`<a href="#block-${id}"><g class="block" data-block-id="${id}"><rect x="${x}" y="${y}" width="${BOX_WIDTH}" height="${BOX_HEIGHT}" rx="6" fill="${block.enabled === false ? "#eee" : "#fff"}" stroke="#1565c0"/>
<text x="${x + 8}" y="${y + 19}" font-size="13" font-weight="600">${(block.name ?? id).slice(0, 22)}</text><text x="${x + 8}" y="${y + 36}" font-size="11" fill="#555">${block.type}</text></g></a>`;
  });
  return html`<svg class="graph" role="group" aria-label="${label}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>
${edges}${boxes}</svg>`;
}

/**
 * Every block's configuration (code, expressions, prompts), folded; a block chosen in the graph
 * (its link to `#block-<id>`) opens and scrolls to its own, the browser revealing a folded target.
 */
export function blockConfigs(state: DrawnState): Markup {
  return html`<section aria-labelledby="blocks-heading" class="block-configs"><h3 id="blocks-heading">Blocks</h3>
${Object.entries(state.blocks).map(([id, block]) => html`<details class="block-config" data-block-id="${id}"><summary>${block.name ?? id} <small>(${block.type}${block.enabled === false ? ", disabled" : ""})</small></summary><div id="block-${id}"><pre class="json">${JSON.stringify(block.config ?? {}, null, 2)}</pre></div></details>`)}
</section>`;
}
