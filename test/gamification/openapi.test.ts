import { describe, expect, it } from "vitest";
import { openApi } from "./openapi.ts";

/** Every `$ref` string anywhere in a value. */
function references(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(references);
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => (key === "$ref" && typeof child === "string" ? [child] : references(child)));
}

describe("docs/openapi.yaml", () => {
  it("is an OpenAPI 3.1 document describing every gamification route", () => {
    expect(openApi.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(openApi.paths).filter((path) => path.startsWith("/api/v1/gamification/")).sort()).toEqual([
      "/api/v1/gamification/badges/user/{usuario_id}",
      "/api/v1/gamification/points",
      "/api/v1/gamification/points/history",
      "/api/v1/gamification/points/lote",
      "/api/v1/gamification/rankings/categoria/{categoria}",
      "/api/v1/gamification/rankings/local",
      "/api/v1/gamification/rankings/nacional",
    ]);
  });

  it("has no dangling references", () => {
    const dangling = references(openApi).filter((ref) => {
      const target = ref
        .replace(/^#\//, "")
        .split("/")
        .reduce<unknown>((node, key) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined), openApi);
      return target === undefined;
    });
    expect(dangling).toEqual([]);
  });
});
