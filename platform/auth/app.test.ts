import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/stack-config.ts";
import { createAuthService } from "./app.ts";
import { readAuthSettings } from "./settings.ts";

// These requests are all answered before the database is touched, so no stack is needed. The
// settings are the project's own config.toml (as `npm start` and the CLI read it), not the test stack's.
const service = createAuthService(loadConfig("test"), { ...readAuthSettings("dev"), enableSignup: false });
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

  it("answers health and settings, and unknown paths or methods in GoTrue's JSON error shape", async () => {
    expect(await (await call("/health")).json()).toMatchObject({ name: "GoTrue" });
    expect(await (await call("/settings")).json()).toMatchObject({ disable_signup: true, mailer_autoconfirm: true });
    const unknown = await call("/nothing-here");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: "not_found", message: "No API route matches GET /nothing-here" });
    const legacy = await service.fetch(new Request("http://auth/nothing-here"));
    expect(await legacy.json()).toEqual({ code: 404, error_code: "not_found", msg: "No API route matches GET /nothing-here" });
    const wrongMethod = await call("/signup");
    expect(wrongMethod.status).toBe(405);
    expect(await wrongMethod.json()).toEqual({ code: "method_not_allowed", message: "GET is not allowed on /signup" });
  });

  it("answers features that need an outside provider as GoTrue does when they are off", async () => {
    const cases: [string, RequestInit, number, string][] = [
      ["/authorize?provider=github", {}, 400, "validation_failed"],
      ["/sso", { method: "POST", body: "{}" }, 404, "saml_provider_disabled"],
      ["/passkeys/authentication/options", { method: "POST", body: "{}" }, 404, "passkey_disabled"],
      ["/token?grant_type=web3", { method: "POST", body: "{}" }, 422, "web3_provider_disabled"],
    ];
    for (const [path, init, status, code] of cases) {
      const response = await call(path, init);
      expect([path, response.status, ((await response.json()) as { code: string }).code]).toEqual([path, status, code]);
    }
  });
});
