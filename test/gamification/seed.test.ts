/**
 * The gamification seed (supabase/seeds/gamification.sql), which `npm start` and the test stack
 * both load (`supabase db push --include-seed`), holds what the README and docs/gamification.md
 * promise: the technician the docs sign in as has a year of history, not only its last month, and
 * every seeded technician is at the level the docs' seed table gives (together, every level from
 * Iniciante to Legend). Everything is read as a client would, through the API and supabase-js.
 * The seed's technicians are never scored by other tests (they make their own with factories).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { anonClient } from "../helpers/clients.ts";
import { callApi } from "./api.ts";

const DOMAIN = "tecnicos.orbita.test";

/** The seed's stable id for an e-mail: md5('orbita-seed-' || email)::uuid. */
function seededId(email: string): string {
  const hex = createHash("md5").update(`orbita-seed-${email}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The docs' seed table, read from docs/gamification.md so the test and the page cannot disagree:
 * each row's e-mails (`ana.souza@tecnicos.orbita.test`, or `bruno.lima@…` for the same domain)
 * and the level name in its last cell.
 */
function documentedLevels(): Map<string, string> {
  const page = readFileSync(`${PROJECT_ROOT}/docs/gamification.md`, "utf8");
  const section = page.slice(page.indexOf("## Seed (npm start)"), page.indexOf("## Decisions on the spec's gaps"));
  const levels = new Map<string, string>();
  for (const row of section.split("\n").filter((line) => line.startsWith("| `"))) {
    const cells = row.split("|").map((cell) => cell.trim());
    const level = cells[cells.length - 2];
    for (const [, local, domain] of row.matchAll(/`([a-z.]+)@(…|[a-z.]+)`/g)) levels.set(`${local}@${domain === "…" ? DOMAIN : domain}`, level);
  }
  return levels;
}

describe("the gamification seed", () => {
  it("gives Ana a year of history: her 365-day window holds actions older than 30 days", async () => {
    const ana = anonClient();
    const { data, error } = await ana.auth.signInWithPassword({ email: `ana.souza@${DOMAIN}`, password: "tecnico123" });
    if (error) throw error;
    const history = async (periodo: string) => {
      const answer = await callApi("GET", "/points/history", { token: data.session.access_token, query: { periodo, limit: 100 } });
      expect(answer.status).toBe(200);
      return answer.body.data as { historico: { data_acao: string }[]; resumo: { total_acoes: number; total_pontos_periodo: number } };
    };
    const month = await history("30d");
    const year = await history("365d");
    expect(month.resumo.total_acoes).toBeGreaterThan(0);
    expect(year.resumo.total_acoes).toBeGreaterThan(month.resumo.total_acoes);
    expect(year.resumo.total_pontos_periodo).toBeGreaterThan(month.resumo.total_pontos_periodo);
    // Spread over the year, not only its last weeks: her oldest action is more than 300 days old.
    const last = await callApi("GET", "/points/history", { token: data.session.access_token, query: { periodo: "365d", limit: 1, offset: year.resumo.total_acoes - 1 } });
    const oldest = (last.body.data as { historico: { data_acao: string }[] }).historico[0].data_acao;
    expect(Date.now() - Date.parse(oldest)).toBeGreaterThan(300 * 86_400_000);
  });

  it("puts every technician at the level docs/gamification.md lists, which covers every level", async () => {
    const documented = documentedLevels();
    expect(documented.size).toBe(18);
    const ana = anonClient();
    const { error } = await ana.auth.signInWithPassword({ email: `ana.souza@${DOMAIN}`, password: "tecnico123" });
    if (error) throw error;
    const { data: levels, error: levelsError } = await ana.from("niveis").select("slug, nome");
    if (levelsError) throw levelsError;
    const nameOf = new Map(levels.map((level) => [level.slug as string, level.nome as string]));
    const ids = [...documented.keys()].map(seededId);
    const { data: rows, error: rowsError } = await ana.from("tecnicos").select("id, nivel").in("id", ids);
    if (rowsError) throw rowsError;
    const actual = new Map(rows.map((row) => [row.id as string, nameOf.get(row.nivel as string)]));
    expect(Object.fromEntries([...documented.keys()].map((email) => [email, actual.get(seededId(email))])))
      .toEqual(Object.fromEntries(documented));
    expect(new Set(documented.values())).toEqual(new Set(levels.map((level) => level.nome)));
  });
});
