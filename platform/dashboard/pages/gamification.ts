import { Hono } from "hono";
import { html } from "hono/html";
import { flashOf, invalid } from "../actions.ts";
import { DashboardError } from "../errors.ts";
import { layout } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";

/** The gamification API's envelope. */
interface Envelope<T> {
  success: boolean;
  data: T;
}

interface BoardEntry {
  posicao: number;
  usuario_id: string;
  nome: string;
  nivel: string;
  pontos: number;
  badges_count: number;
  variacao_posicao: number;
}

interface Board {
  meta: { periodo: string; periodo_inicio: string; periodo_fim: string; total_tecnicos: number; cidade?: string; uf?: string };
  ranking: BoardEntry[];
}

interface History {
  resumo: { total_acoes: number; total_pontos_periodo: number; media_pontos_dia: number; acao_mais_frequente: string | null };
  historico: { id: number; acao: string; cidade: string; data_acao: string; pontos_base: number; pontos_final: number; multiplicadores: Record<string, number> }[];
  paginacao: { total: number; limit: number; offset: number; has_next: boolean };
}

interface Badge {
  codigo: string;
  nome: string;
  categoria: string;
  descricao: string;
  conquistado_em: string;
}

/** The API's ranking periods. */
const PERIODS = ["semanal", "mensal", "anual", "geral"];
/** Board entries and history lines per page (the API's own limit is 100). */
const PAGE_SIZE = 20;
const API = "/api/v1/gamification";

function pageOf(value: string | undefined): number {
  return Math.max(1, Number.parseInt(value ?? "1", 10) || 1);
}

function pager(base: string, page: number, hasNext: boolean): ReturnType<typeof html> {
  const link = (to: number, label: string) => html` · <a href="${base}${base.includes("?") ? "&" : "?"}page=${to}">${label}</a>`;
  return html`page ${page}${page > 1 ? link(page - 1, "Previous") : ""}${hasNext ? link(page + 1, "Next") : ""}`;
}

/**
 * Gamification: the national and city boards and a technician's history and badges, read from the
 * gamification API (/api/v1/gamification) as the back office reads them, with the service_role key.
 */
export function gamificationPages(stack: StackClient): Hono {
  const pages = new Hono();

  pages.get("/", async (c) => {
    const board = c.req.query("board") === "local" ? "local" : "nacional";
    const periodo = c.req.query("periodo") ?? "mensal";
    if (!PERIODS.includes(periodo)) throw invalid(`The period must be one of ${PERIODS.join(", ")}`);
    const cities = await stack.json<{ id: string; nome: string; uf: string }[]>("/rest/v1/cidades?select=id,nome,uf&order=nome");
    const cidade = c.req.query("cidade") || cities[0]?.id || "";
    const page = pageOf(c.req.query("page"));
    const query = new URLSearchParams({ periodo, limit: String(PAGE_SIZE), offset: String((page - 1) * PAGE_SIZE), ...(board === "local" ? { cidade } : {}) });
    const { data } = await stack.json<Envelope<Board>>(`${API}/rankings/${board}?${query}`);
    const title = board === "local" ? `City board: ${data.meta.cidade ?? cidade}${data.meta.uf ? ` (${data.meta.uf})` : ""}` : "National board";
    const base = `/gamification?board=${board}&periodo=${periodo}${board === "local" ? `&cidade=${encodeURIComponent(cidade)}` : ""}`;
    const content = html`<form method="get" action="/gamification" class="inline" role="search" aria-label="Choose a board">
<label>Board <select name="board" aria-label="Board"><option value="nacional"${board === "nacional" ? " selected" : ""}>National</option><option value="local"${board === "local" ? " selected" : ""}>City</option></select></label>
<label>City <select name="cidade" aria-label="City">${cities.map((city) => html`<option value="${city.id}"${city.id === cidade ? " selected" : ""}>${city.nome} (${city.uf})</option>`)}</select></label>
<label>Period <select name="periodo" aria-label="Period">${PERIODS.map((candidate) => html`<option${candidate === periodo ? " selected" : ""}>${candidate}</option>`)}</select></label>
<button type="submit">Show</button>
</form>
<h2>${title}</h2>
<p class="total">${data.meta.total_tecnicos} technicians · ${data.meta.periodo} from ${data.meta.periodo_inicio} to ${data.meta.periodo_fim} · ${pager(base, page, page * PAGE_SIZE < data.meta.total_tecnicos)}</p>
<table class="board"><thead><tr><th>#</th><th>Technician</th><th>Level</th><th>Points</th><th>Badges</th><th>Change today</th></tr></thead><tbody>
${data.ranking.map((entry) => html`<tr><td>${entry.posicao}</td><td><a href="/gamification/technicians/${entry.usuario_id}">${entry.nome}</a></td><td>${entry.nivel}</td><td>${entry.pontos}</td><td>${entry.badges_count}</td><td>${entry.variacao_posicao > 0 ? `+${entry.variacao_posicao}` : entry.variacao_posicao}</td></tr>`)}
</tbody></table>`;
    return c.html(layout("Gamification", "Gamification", flashOf(c), content));
  });

  pages.get("/technicians/:id", async (c) => {
    const id = c.req.param("id");
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw new DashboardError(404, `There is no technician ${id}`);
    const days = Number.parseInt(c.req.query("dias") ?? "30", 10);
    if (!Number.isInteger(days) || days < 1 || days > 365) throw invalid("The history covers 1 to 365 days");
    const page = pageOf(c.req.query("page"));
    // Names from the catalogues the slugs point at: people read "São Paulo (SP)", not sao-paulo-sp.
    const [technician] = await stack.json<{ nome: string; cidade_id: string; pontos_total: number; ativo: boolean; niveis: { nome: string }; cidades: { nome: string; uf: string } }[]>(`/rest/v1/tecnicos?select=nome,cidade_id,pontos_total,ativo,niveis(nome),cidades(nome,uf)&id=eq.${id}`);
    if (!technician) throw new DashboardError(404, `There is no technician ${id}`);
    const query = new URLSearchParams({ usuario_id: id, periodo: `${days}d`, limit: String(PAGE_SIZE), offset: String((page - 1) * PAGE_SIZE) });
    const [{ data: history }, { data: held }, actions] = await Promise.all([
      stack.json<Envelope<History>>(`${API}/points/history?${query}`),
      stack.json<Envelope<{ badges: Badge[] }>>(`${API}/badges/user/${id}`),
      stack.json<{ codigo: string; nome: string }[]>("/rest/v1/acoes?select=codigo,nome"),
    ]);
    const actionNames = new Map(actions.map((action) => [action.codigo, action.nome]));
    const actionName = (codigo: string | null) => (codigo === null ? "none" : actionNames.get(codigo) ?? codigo);
    const base = `/gamification/technicians/${id}?dias=${days}`;
    const content = html`<p><a href="/gamification">Boards</a> · <a href="/auth/users/${id}">Account</a> · <a href="/gamification?board=local&cidade=${encodeURIComponent(technician.cidade_id)}">City board</a></p>
<table class="technician"><tbody><tr><th scope="row">Level</th><td>${technician.niveis.nome}</td></tr><tr><th scope="row">Total points</th><td>${technician.pontos_total}</td></tr><tr><th scope="row">Home city</th><td>${technician.cidades.nome} (${technician.cidades.uf})</td></tr><tr><th scope="row">Active</th><td>${technician.ativo ? "yes" : "no"}</td></tr></tbody></table>
<h2>Badges</h2>
${held.badges.length === 0 ? html`<p>No badges yet.</p>` : html`<ul class="badges">${held.badges.map((badge) => html`<li><strong>${badge.nome}</strong> <small>(${badge.categoria}, ${badge.conquistado_em})</small> ${badge.descricao}</li>`)}</ul>`}
<h2>History</h2>
<form method="get" action="/gamification/technicians/${id}" class="inline" aria-label="History window">
<label>Last days <input name="dias" type="number" min="1" max="365" value="${days}"></label><button type="submit">Show</button>
</form>
<p class="summary">${history.resumo.total_acoes} actions, ${history.resumo.total_pontos_periodo} points in ${days} days (${history.resumo.media_pontos_dia} a day); most frequent: ${actionName(history.resumo.acao_mais_frequente)} · ${pager(base, page, history.paginacao.has_next)}</p>
<table class="history"><thead><tr><th>When</th><th>Action</th><th>City</th><th>Base</th><th>Points</th><th>Multipliers</th></tr></thead><tbody>
${history.historico.map((line) => html`<tr><td>${line.data_acao}</td><td>${actionName(line.acao)}</td><td>${line.cidade}</td><td>${line.pontos_base}</td><td>${line.pontos_final}</td><td>${Object.entries(line.multiplicadores).map(([name, factor]) => `${name} ×${factor}`).join(", ")}</td></tr>`)}
</tbody></table>`;
    return c.html(layout(technician.nome, "Gamification", flashOf(c), content));
  });

  return pages;
}
