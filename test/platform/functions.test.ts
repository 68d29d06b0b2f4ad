import { createClient, FunctionsHttpError } from "@supabase/supabase-js";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { signHs256 } from "../../platform/keys/api-keys.ts";
import { anonClient, createTestUser, serviceClient } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { until } from "../helpers/until.ts";

// The functions used here live in test/fixtures/functions (served by the test stack only); their
// verify_jwt settings and the short wall-clock limit of fixture-hangs are in its config.toml.
const functionsUrl = `${env.url}/functions/v1`;
// Node 20 has no global WebSocket, which supabase-js's realtime client needs at construction.
const clientOptions = {
  auth: { persistSession: false, autoRefreshToken: false },
  realtime: { transport: WebSocket as never },
};

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown; elapsedMs: number }> {
  const started = Date.now();
  const response = await fetch(`${functionsUrl}${path}`, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Plain-text answers (404 "Function not found") stay text.
  }
  return { status: response.status, body, elapsedMs: Date.now() - started };
}

const bootId = async (slug: string) => ((await call(`/${slug}?mode=ok`)).body as { bootId: string }).bootId;

describe("verify_jwt (on by default)", () => {
  it("refuses a request without an Authorization header", async () => {
    const { status, body } = await call("/fixture-echo");
    expect(status).toBe(401);
    expect(body).toEqual({ msg: "Error: Missing authorization header" });
  });

  it("refuses an Authorization header that is not a Bearer token", async () => {
    const { status, body } = await call("/fixture-echo", { headers: { authorization: "Basic dXNlcjpwYXNz" } });
    expect(status).toBe(401);
    expect(body).toEqual({ msg: "Error: Auth header is not 'Bearer {token}'" });
  });

  it("refuses a JWT signed with another secret, and an expired one", async () => {
    const forged = signHs256({ role: "service_role", exp: Math.floor(Date.now() / 1000) + 600 }, "not-the-project-secret-but-long-enough-1234");
    const expired = signHs256({ role: "anon", exp: Math.floor(Date.now() / 1000) - 10 }, env.jwtSecret);
    for (const token of [forged, expired, "not-a-jwt"]) {
      const { status, body } = await call("/fixture-echo", { headers: { authorization: `Bearer ${token}` } });
      expect(status).toBe(401);
      expect(body).toEqual({ msg: "Invalid JWT" });
    }
  });

  it("lets the anon key through (supabase-js invoke)", async () => {
    const { data, error } = await anonClient().functions.invoke("fixture-echo", { body: { hello: "world" } });
    expect(error).toBeNull();
    expect(data).toMatchObject({ path: "/fixture-echo", method: "POST", body: JSON.stringify({ hello: "world" }) });
  });

  it("lets a signed-in user's access token through", async () => {
    const user = await createTestUser();
    const { data, error } = await user.client.functions.invoke("fixture-echo", { method: "GET" });
    expect(error).toBeNull();
    expect(data).toMatchObject({ path: "/fixture-echo", method: "GET" });
  });

  it("lets a client holding only the publishable key through (the gateway turns it into the anon JWT)", async () => {
    const client = createClient(env.url, env.publishableKey, clientOptions);
    const { data, error } = await client.functions.invoke("fixture-echo", { body: { via: "publishable" } });
    expect(error).toBeNull();
    expect(data).toMatchObject({ path: "/fixture-echo" });
  });

  it("skips the check for OPTIONS, so a function can answer CORS preflights itself", async () => {
    // The gateway answers preflights on its own, so this goes to the functions host directly.
    const host = `http://127.0.0.1:${loadConfig("test").ports.functions}`;
    const response = await fetch(`${host}/fixture-echo`, { method: "OPTIONS" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ path: "/fixture-echo", method: "OPTIONS" });
  });

  it("reports a refused call to supabase-js as a FunctionsHttpError with the 401 response", async () => {
    const client = createClient(env.url, env.anonKey, { ...clientOptions, global: { headers: { Authorization: "Bearer broken.token.here" } } });
    const { error } = await client.functions.invoke("fixture-echo");
    expect(error).toBeInstanceOf(FunctionsHttpError);
    const response = (error as FunctionsHttpError).context as Response;
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ msg: "Invalid JWT" });
  });
});

describe("verify_jwt = false", () => {
  it("answers without any JWT, for a function written as `export default { fetch }`", async () => {
    const { status, body } = await call("/fixture-public");
    expect(status).toBe(200);
    expect(body).toEqual({ path: "/fixture-public", authorization: false });
  });
});

describe("what a function sees", () => {
  it("gets a path that starts with /<slug>, with the sub-path and query kept", async () => {
    const { data, error } = await serviceClient().functions.invoke("fixture-echo/items/42?sort=desc", { method: "GET" });
    expect(error).toBeNull();
    expect(data).toMatchObject({ path: "/fixture-echo/items/42", query: { sort: "desc" } });
  });

  it("gets the CLI's environment: the gateway URL, the keys, the database, JWKS and the mail catcher", async () => {
    const { data } = await serviceClient().functions.invoke("fixture-echo", { method: "GET" });
    expect(data.supabaseUrl).toBe(env.url);
    expect(data.set).toEqual([
      "SUPABASE_URL",
      "SUPABASE_ANON_KEY",
      "SUPABASE_SERVICE_ROLE_KEY",
      "SUPABASE_DB_URL",
      "SUPABASE_PUBLISHABLE_KEYS",
      "SUPABASE_SECRET_KEYS",
      "SUPABASE_JWKS",
    ]);
    expect(data.anonKeyRole).toBe("anon");
    expect(data.serviceRoleKeyRole).toBe("service_role");
    expect(data.publishableKeys).toEqual(["default"]);
    // The test stack has signing keys (test/fixtures/config.toml): their public halves, then the legacy secret.
    expect(data.jwksKeyTypes).toEqual(["EC", "RSA", "oct"]);
    expect(data.resendBaseUrl).toBe(env.mailUrl);
  });

  it("does not see the platform's own environment", async () => {
    const { data } = await serviceClient().functions.invoke("fixture-echo", { method: "GET" });
    const names = data.names as string[];
    expect(names.filter((name) => name.startsWith("ORBITA_") || name.startsWith("npm_"))).toEqual([]);
  });
});

describe("routing", () => {
  it("answers 404 Function not found for an unknown slug", async () => {
    const { status, body } = await call("/no-such-function", { headers: { authorization: `Bearer ${env.anonKey}` } });
    expect(status).toBe(404);
    expect(body).toBe("Function not found");
  });

  it("never serves a folder that is not a function slug (_shared)", async () => {
    const { status } = await call("/_shared", { headers: { authorization: `Bearer ${env.anonKey}` } });
    expect(status).toBe(404);
  });
});

describe("faults stay inside the function's worker", () => {
  it("answers 500 WORKER_ERROR when the handler throws, and the same worker serves the next request", async () => {
    const before = await bootId("fixture-throws");
    const { status, body } = await call("/fixture-throws?mode=throw");
    expect(status).toBe(500);
    expect(body).toMatchObject({ code: "WORKER_ERROR" });
    const after = await call("/fixture-throws?mode=ok");
    expect(after.status).toBe(200);
    expect((after.body as { bootId: string }).bootId).toBe(before);
  });

  it("answers 500 when the worker dies mid-request (uncaught error, Deno.exit), then boots a fresh one", async () => {
    for (const mode of ["crash", "exit"]) {
      const before = await bootId("fixture-throws");
      const { status, body } = await call(`/fixture-throws?mode=${mode}`);
      expect(status).toBe(500);
      expect(body).toMatchObject({ code: "WORKER_ERROR" });
      const after = await bootId("fixture-throws");
      expect(after).not.toBe(before);
    }
  });

  it("answers 503 BOOT_ERROR for a function that fails while loading", async () => {
    const { status, body } = await call("/fixture-boot-error");
    expect(status).toBe(503);
    expect(body).toEqual({ code: "BOOT_ERROR", message: "Worker failed to boot (please check logs)" });
  });

  it("stops a request at the wall-clock limit with 546 WORKER_LIMIT and replaces the worker", async () => {
    // fixture-hangs has a 1.5 s limit (test/fixtures/functions/config.toml).
    for (const mode of ["wait", "cpu"]) {
      const before = await bootId("fixture-hangs");
      const { status, body, elapsedMs } = await call(`/fixture-hangs?mode=${mode}`);
      expect(status).toBe(546);
      expect(body).toMatchObject({ code: "WORKER_LIMIT" });
      expect(elapsedMs).toBeGreaterThanOrEqual(1_400);
      expect(elapsedMs).toBeLessThan(5_000);
      const after = await call("/fixture-hangs?mode=ok");
      expect(after.status).toBe(200);
      expect((after.body as { bootId: string }).bootId).not.toBe(before);
    }
  });

  it("cuts off a response still streaming at the wall-clock limit, also from a worker stuck in a loop, and replaces the worker", async () => {
    for (const mode of ["stream", "stream-cpu"]) {
      const before = await bootId("fixture-hangs");
      const started = Date.now();
      const response = await fetch(`${functionsUrl}/fixture-hangs?mode=${mode}`);
      expect(response.status).toBe(200);
      await expect(response.text()).rejects.toThrow();
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
      const after = await call("/fixture-hangs?mode=ok");
      expect(after.status).toBe(200);
      expect((after.body as { bootId: string }).bootId).not.toBe(before);
    }
  });

  it("keeps serving other functions while one hangs", async () => {
    const hanging = call("/fixture-hangs?mode=cpu");
    const started = Date.now();
    const other = await call("/fixture-public");
    expect(other.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await hanging).status).toBe(546);
  });
});

/** The functions host's JSON log lines written after `offset` (a byte position in its log). */
const hostLog = join(loadConfig("test").logDir, "functions.log");
const logSize = () => statSync(hostLog).size;
function logLinesSince(offset: number): Record<string, unknown>[] {
  return readFileSync(hostLog).subarray(offset).toString("utf8").split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
const workerFailures = (offset: number, slug: string) =>
  logLinesSince(offset).filter((line) => line.message === "function worker failed" && line.function === slug);
const failedRequests = (offset: number, slug: string) =>
  logLinesSince(offset).filter((line) => line.message === "request failed" && line.function === slug);

describe("a worker failure under concurrent requests", () => {
  it("answers every request waiting for a worker that dies while booting with 503 BOOT_ERROR, and logs why once", async () => {
    for (const [slug, reason] of [["fixture-boot-crash", /uncaught error: Error: fixture-boot-crash: dying while booting on purpose/], ["fixture-boot-exit", /exited with code 4/]] as const) {
      const offset = logSize();
      const answers = await Promise.all(Array.from({ length: 8 }, () => call(`/${slug}`)));
      expect(answers.map((answer) => [answer.status, answer.body])).toEqual(Array(8).fill([503, { code: "BOOT_ERROR", message: "Worker failed to boot (please check logs)" }]));
      // Well before the 3 s wall-clock limit: nobody is left waiting on a worker that is gone.
      expect(Math.max(...answers.map((answer) => answer.elapsedMs))).toBeLessThan(2_500);
      await until("the functions log", () => failedRequests(offset, slug).length === 8, 5_000, 50);
      // Requests that reach the host after a boot failed start the next boot, so a loaded machine
      // may see more than one: each is logged once, with its reason and the requests it failed.
      const failures = workerFailures(offset, slug);
      expect(failures.length).toBeGreaterThanOrEqual(1);
      for (const failure of failures) expect(failure).toEqual(expect.objectContaining({ level: "error", phase: "boot", reason: expect.stringMatching(reason) }));
      expect(failures.reduce((sum, failure) => sum + Number(failure.inFlight), 0)).toBe(8);
      expect(failedRequests(offset, slug).map((line) => [line.status, line.code])).toEqual(Array(8).fill([503, "BOOT_ERROR"]));
    }
  });

  it("fails every request in flight on a worker that dies with 500 WORKER_ERROR, logging the reason once and each request", async () => {
    await call("/fixture-throws?mode=ok");
    const offset = logSize();
    const answers = await Promise.all([
      ...Array.from({ length: 7 }, () => call("/fixture-throws?mode=hold")),
      call("/fixture-throws?mode=crash&after=7"),
    ]);
    expect(answers.map((answer) => [answer.status, (answer.body as { code?: string }).code])).toEqual(Array(8).fill([500, "WORKER_ERROR"]));
    await until("the functions log", () => failedRequests(offset, "fixture-throws").length === 8, 5_000, 50);
    expect(workerFailures(offset, "fixture-throws")).toEqual([
      expect.objectContaining({ level: "error", phase: "serving", inFlight: 8, reason: expect.stringMatching(/uncaught error: Error: fixture-throws: uncaught on purpose/) }),
    ]);
  });

  it("logs one line with the reason for each kind of worker failure: boot error, exit, wall-clock limit", async () => {
    const cases: [string, string, RegExp][] = [
      ["fixture-boot-error", "", /boot error: .*fixture-boot-error: failing at import on purpose/],
      ["fixture-throws", "?mode=exit", /exited with code 3/],
      ["fixture-hangs", "?mode=wait", /a request ran past the 1500 ms wall-clock limit/],
    ];
    for (const [slug, query, reason] of cases) {
      const offset = logSize();
      await call(`/${slug}${query}`);
      await until("the functions log", () => workerFailures(offset, slug).length > 0, 5_000, 50);
      expect(workerFailures(offset, slug)).toEqual([expect.objectContaining({ level: "error", reason: expect.stringMatching(reason) })]);
    }
  });
});
