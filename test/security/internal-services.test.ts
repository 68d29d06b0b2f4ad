/**
 * The internal services the gateway fronts demand its credential (issue 29, finding 1): anything on
 * the machine can open a loopback port, so the gateway's node half (auth, storage, the data API's
 * counted bodies, the token verifier) refuses a request that did not come through the gateway, in
 * the shape of the service it names, and nothing reaches the service: 70 sign-in tries straight at
 * its port used to skip the gateway's rate limit. pg-meta's own port is covered in
 * test/platform/pg-meta.test.ts.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { GATEWAY_CREDENTIAL_HEADER } from "../../platform/gateway/internal-credential.ts";
import { createTestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

const config = loadConfig("test");
const inner = `http://127.0.0.1:${config.ports.gatewayInner}`;
const MESSAGE = "Only the API gateway may call this port; send the request to the gateway";

describe("the gateway's node half", () => {
  it("refuses each service's requests without the gateway's credential, in that service's shape", async () => {
    const user = await createTestUser();
    const signIn = JSON.stringify({ email: user.email, password: user.password });
    const cases: [string, RequestInit & { headers: Record<string, string> }, unknown][] = [
      ["/token?grant_type=password", { method: "POST", headers: { "x-orbita-service": "auth", "content-type": "application/json", apikey: env.anonKey }, body: signIn }, { code: "no_gateway_credential", message: MESSAGE }],
      ["/object/list/avatars", { method: "POST", headers: { "x-orbita-service": "storage", authorization: `Bearer ${env.serviceRoleKey}`, "content-type": "application/json" }, body: "{}" }, { statusCode: "401", error: "no_gateway_credential", message: MESSAGE }],
      ["/products", { method: "POST", headers: { "x-orbita-service": "rest", authorization: `Bearer ${env.serviceRoleKey}`, "content-type": "application/json" }, body: "{}" }, { code: "no_gateway_credential", message: MESSAGE, details: null, hint: null }],
      ["/_verify", { headers: { authorization: `Bearer ${env.serviceRoleKey}` } }, { message: MESSAGE }],
    ];
    for (const [path, init, body] of cases) {
      for (const credential of [undefined, "guess", ""]) {
        const headers = credential === undefined ? init.headers : { ...init.headers, [GATEWAY_CREDENTIAL_HEADER]: credential };
        const response = await fetch(`${inner}${path}`, { ...init, headers });
        expect(response.status, `${path} with ${String(credential)}`).toBe(401);
        expect(await response.json()).toEqual(body);
      }
    }
    // The same sign-in through the gateway works.
    const through = await fetch(`${env.url}/auth/v1/token?grant_type=password`, { method: "POST", headers: { apikey: env.publishableKey, "content-type": "application/json" }, body: signIn });
    expect(through.status).toBe(200);
  });

  it("lets no sign-in try past the gateway's rate limit by calling its port", async () => {
    const user = await createTestUser();
    const tries = await Promise.all(Array.from({ length: 70 }, () =>
      fetch(`${inner}/token?grant_type=password`, { method: "POST", headers: { "x-orbita-service": "auth", "content-type": "application/json" }, body: JSON.stringify({ email: user.email, password: "wrong-password-guess" }) }).then((response) => response.status)));
    expect(new Set(tries)).toEqual(new Set([401]));
    // None reached auth: the user's own sign-in is not locked or limited by them.
    const signIn = await fetch(`${env.url}/auth/v1/token?grant_type=password`, { method: "POST", headers: { apikey: env.publishableKey, "content-type": "application/json" }, body: JSON.stringify({ email: user.email, password: user.password }) });
    expect(signIn.status).toBe(200);
  });

  it("keeps the credential in a file only its owner can read", () => {
    expect(statSync(join(config.runtimeDir, "gateway", "credential")).mode & 0o777).toBe(0o600);
  });
});
