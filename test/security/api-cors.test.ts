/**
 * Browser apps can call the specs' /api surface (gamification, workflows, logs) from another
 * origin: the `api` function answers CORS preflights and tags its answers itself, because hosted
 * Supabase adds no CORS headers to a function's answers. The function is called on the functions
 * host's own port too, where the local gateway cannot add its headers for it.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { env } from "../helpers/env.ts";

const functionsHost = `http://127.0.0.1:${loadConfig("test").ports.functions}`;
const ORIGIN = "https://app.example.test";

describe("CORS on the /api surface", () => {
  for (const [base, where] of [[`${env.url}/api`, "through the gateway"], [`${functionsHost}/api`, "on the functions host"]] as const) {
    it(`answers a preflight for a scoring call ${where}, allowing the headers the app asks for`, async () => {
      const response = await fetch(`${base}/v1/gamification/points`, {
        method: "OPTIONS",
        headers: { Origin: ORIGIN, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, x-client-info" },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("access-control-allow-methods")).toContain("POST");
      expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
    });
  }

  it("tags an answer of the function itself (here a 401 of the execute endpoint) so the browser may read it", async () => {
    const response = await fetch(`${functionsHost}/api/workflows/f5000000-0000-4000-8000-000000000003/execute`, {
      method: "POST",
      headers: { Origin: ORIGIN, "content-type": "application/json", "X-API-Key": "orb_not_a_real_key" },
      body: "{}",
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("retry-after");
  });
});
