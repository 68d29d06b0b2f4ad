import { describe, expect, it } from "vitest";
import { categoryRankingQuery, describeIssues, historyQuery, localRankingQuery, nationalRankingQuery, scoreBody } from "./schemas.ts";

const validBody = {
  usuario_id: "d41d8cd9-8f00-b204-e980-0998ecf8427e",
  acao: "checkin_pontual",
  chamado_id: "7e0b5a8e-3c1f-4d2a-9b6e-1f2d3c4b5a69",
  metadata: { latitude: -23.55, longitude: -46.63, timestamp_checkin: "2026-11-21T10:00:00-03:00" },
};

describe("scoreBody", () => {
  it("accepts the spec's action registration, ids that are not version-4 UUIDs included", () => {
    expect(scoreBody.safeParse(validBody).success).toBe(true);
  });

  it("keeps extra metadata the app sends (accuracy, device)", () => {
    const parsed = scoreBody.parse({ ...validBody, metadata: { ...validBody.metadata, precisao_m: 8 } });
    expect(parsed.metadata).toMatchObject({ precisao_m: 8 });
  });

  it("refuses malformed UUIDs, unknown top-level fields and coordinates sent as text", () => {
    const result = scoreBody.safeParse({ ...validBody, usuario_id: "123", extra: true, metadata: { latitude: "-23.5" } });
    expect(result.success).toBe(false);
    const fields = describeIssues(result.error?.issues ?? []).map((problem) => problem.campo);
    expect(fields).toEqual(expect.arrayContaining(["usuario_id", "extra", "metadata.latitude"]));
  });

  it("refuses a check-in time that is not ISO 8601 with an offset", () => {
    expect(scoreBody.safeParse({ ...validBody, metadata: { timestamp_checkin: "21/11/2026 10:00" } }).success).toBe(false);
  });

  it("leaves range checks to the database (they answer 422, not 400)", () => {
    expect(scoreBody.safeParse({ ...validBody, metadata: { latitude: 91, longitude: 0 } }).success).toBe(true);
  });
});

describe("historyQuery", () => {
  it("defaults to 30 days, 20 items from the start", () => {
    expect(historyQuery.parse({})).toEqual({ periodo: 30, limit: 20, offset: 0 });
  });

  it("reads periodo as <N>d", () => {
    expect(historyQuery.parse({ periodo: "7d" }).periodo).toBe(7);
  });

  it.each(["30", "0d", "366d", "7 days", "-1d"])("refuses periodo %s", (periodo) => {
    expect(historyQuery.safeParse({ periodo }).success).toBe(false);
  });

  it.each(["0", "101", "abc", "2.5", ""])("refuses limit %s", (limit) => {
    expect(historyQuery.safeParse({ limit }).success).toBe(false);
  });
});

describe("ranking queries", () => {
  it("default to the monthly board", () => {
    expect(localRankingQuery.parse({})).toEqual({ periodo: "mensal", limit: 20, offset: 0 });
    expect(categoryRankingQuery.parse({ periodo: "geral" }).periodo).toBe("geral");
  });

  it("refuses periods other than semanal, mensal, anual and geral", () => {
    expect(localRankingQuery.safeParse({ periodo: "bimestral" }).success).toBe(false);
  });

  it("trims the city and refuses an empty one", () => {
    expect(localRankingQuery.parse({ cidade: "  São Paulo " }).cidade).toBe("São Paulo");
    expect(localRankingQuery.safeParse({ cidade: "  " }).success).toBe(false);
  });

  it("takes a level slug as the national categoria", () => {
    expect(nationalRankingQuery.parse({ categoria: "master_tech" }).categoria).toBe("master_tech");
    expect(nationalRankingQuery.safeParse({ categoria: "Master Tech" }).success).toBe(false);
  });
});
