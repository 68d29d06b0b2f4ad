import { describe, expect, it } from "vitest";
import { quickstart } from "../../examples/client/quickstart.ts";
import { env } from "../helpers/env.ts";

describe("the README's quickstart (examples/client/quickstart.ts)", () => {
  it("signs up, signs in, reads the data API, uploads an avatar and invokes a function", async () => {
    const result = await quickstart(env.url, env.anonKey);
    expect(result.userId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.activeProducts.length).toBeGreaterThan(0);

    const avatar = await fetch(result.avatarUrl);
    expect(avatar.status).toBe(200);
    expect(avatar.headers.get("content-type")).toBe("image/png");

    expect(result.nationalRanking).toMatchObject({ success: true, data: { ranking: expect.any(Array) } });
  });
});
