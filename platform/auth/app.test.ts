import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { createAuthService } from "./app.ts";
import { readAuthSettings } from "./settings.ts";

// These requests are all answered before the database is touched, so no stack is needed.
const service = createAuthService(loadConfig("test"), { ...readAuthSettings(), enableSignup: false });
afterAll(() => service.close());

const call = (path: string, init: RequestInit = {}) =>
  service.fetch(new Request(`http://auth${path}`, { ...init, headers: { "X-Supabase-Api-Version": "2024-01-01", ...init.headers } }));

describe("auth service", () => {
  it("refuses signups when enable_signup is off (422 signup_disabled)", async () => {
    const response = await call("/signup", { method: "POST", body: JSON.stringify({ email: "a@example.test", password: "secret123" }) });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ code: "signup_disabled", message: "Signups not allowed for this instance" });
  });

  it("refuses anonymous sign-ins when they are off (422 anonymous_provider_disabled)", async () => {
    const response = await call("/signup", { method: "POST", body: "{}" });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ code: "anonymous_provider_disabled", message: "Anonymous sign-ins are disabled" });
  });

  it("guards /admin with the bearer token's role", async () => {
    const missing = await call("/admin/users");
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ code: "no_authorization", message: "This endpoint requires a valid Bearer token" });
    const anon = await call("/admin/users", { headers: { Authorization: `Bearer ${loadConfig("test").anonKey}` } });
    expect(anon.status).toBe(403);
    expect(await anon.json()).toEqual({ code: "not_admin", message: "User not allowed" });
  });

  it("answers health and settings, and 404 for unknown paths", async () => {
    expect(await (await call("/health")).json()).toMatchObject({ name: "GoTrue" });
    expect(await (await call("/settings")).json()).toMatchObject({ disable_signup: true, mailer_autoconfirm: true });
    expect((await call("/nothing-here")).status).toBe(404);
  });
});
