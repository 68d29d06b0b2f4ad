/**
 * The dashboard's Gamification page in headless Chromium against the running stack (the seed's
 * technicians): the national and a city's boards as the gamification API ranks them, a
 * technician's badges and history, and an unknown city's refusal in words.
 */
import type { Browser } from "playwright-core";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { launchBrowser, openPage, screenshot, submit } from "./browser.ts";

const sql = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
let browser: Browser;
/** Board entries compared with the API's answer. */
const LEADERS = 3;

/** A board as the gamification API answers it to the service role. */
async function board(path: string): Promise<{ meta: { total_tecnicos: number }; ranking: { nome: string; pontos: number; usuario_id: string }[] }> {
  const response = await fetch(`${env.url}/api/v1/gamification/rankings/${path}`, { headers: { authorization: `Bearer ${env.serviceRoleKey}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Awaited<ReturnType<typeof board>> }).data;
}

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sql.end();
});

describe("the Gamification page in Chromium", () => {
  it("shows the national board, then a city's, as the API ranks them", async () => {
    const national = await board("nacional?periodo=geral&limit=20");
    expect(national.ranking.length).toBeGreaterThan(LEADERS);
    const page = await openPage(browser, "/gamification?periodo=geral");
    expect(await page.getByRole("heading", { level: 2 }).innerText()).toBe("National board");
    // Other suites add technicians with a few points as this runs: the seed's leaders (thousands
    // of points) are the stable part of a board.
    const rows = page.locator("table.board tbody tr");
    expect((await rows.locator("td:nth-child(2)").allInnerTexts()).slice(0, LEADERS)).toEqual(national.ranking.slice(0, LEADERS).map((entry) => entry.nome));
    expect((await rows.locator("td:nth-child(4)").allInnerTexts()).slice(0, LEADERS)).toEqual(national.ranking.slice(0, LEADERS).map((entry) => String(entry.pontos)));
    await screenshot(page, "gamification-national");

    const choose = page.getByRole("search", { name: "Choose a board" });
    await choose.getByLabel("Board").selectOption("local");
    await choose.getByLabel("City").selectOption("sao-paulo-sp");
    await choose.getByLabel("Period").selectOption("geral");
    await submit(page, "Show", choose);
    expect(await page.getByRole("heading", { level: 2 }).innerText()).toBe("City board: São Paulo (SP)");
    const city = await board("local?cidade=sao-paulo-sp&periodo=geral&limit=20");
    expect((await rows.locator("td:nth-child(2)").allInnerTexts()).slice(0, LEADERS)).toEqual(city.ranking.slice(0, LEADERS).map((entry) => entry.nome));
    await page.context().close();
  }, 120_000);

  it("shows a technician's badges and history", async () => {
    const [leader] = (await board("nacional?periodo=geral&limit=1")).ranking;
    const badges = await sql<{ nome: string }[]>`select b.nome from public.usuario_badges ub join public.badges b on b.codigo = ub.badge_codigo where ub.usuario_id = ${leader.usuario_id}`;
    const page = await openPage(browser, "/gamification?periodo=geral");
    await Promise.all([page.waitForURL(/\/gamification\/technicians\//), page.getByRole("link", { name: leader.nome }).first().click()]);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(leader.nome);
    expect((await page.locator("ul.badges li strong").allInnerTexts()).sort()).toEqual(badges.map((badge) => badge.nome).sort());

    const history = page.getByRole("form", { name: "History window" });
    await history.getByLabel("Last days").fill("365");
    await submit(page, "Show", history);
    const [{ actions, points }] = await sql<{ actions: number; points: number }[]>`
      select count(*)::int as actions, coalesce(sum(pontos_final), 0)::int as points from public.historico_pontos
      where usuario_id = ${leader.usuario_id} and data_acao > now() - interval '365 days'`;
    expect(await page.locator(".summary").innerText()).toContain(`${actions} actions, ${points} points in 365 days`);
    expect(await page.locator("table.history tbody tr").count()).toBe(Math.min(20, actions));
    // Names, not slugs: the level, the home city and each action as the catalogues name them.
    const [named] = await sql<{ level: string; city: string }[]>`
      select n.nome as level, c.nome || ' (' || c.uf || ')' as city from public.tecnicos t
      join public.niveis n on n.slug = t.nivel join public.cidades c on c.id = t.cidade_id where t.id = ${leader.usuario_id}`;
    const profile = await page.locator("table.technician").innerText();
    expect(profile).toContain(`Level\t${named.level}`);
    expect(profile).toContain(`Home city\t${named.city}`);
    const actionNames = (await sql<{ nome: string }[]>`select nome from public.acoes`).map((action) => action.nome);
    const shown = await page.locator("table.history tbody tr td:nth-child(2)").allInnerTexts();
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((name) => actionNames.includes(name))).toBe(true);
    await screenshot(page, "gamification-technician");
    await page.context().close();
  }, 120_000);

  it("shows the API's refusal of an unknown city in words", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${process.env.STUDIO_URL}/gamification?board=local&cidade=nowhere-xx`);
    expect(response?.status()).toBe(404);
    expect(await page.getByRole("alert").innerText()).toBe("Cidade não encontrada: nowhere-xx. (CIDADE_NAO_ENCONTRADA)");
    await context.close();
  }, 120_000);
});
