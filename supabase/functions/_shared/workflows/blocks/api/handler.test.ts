import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMisbehavingServer, type MisbehavingServer } from "../../../../../../test/stand-ins/misbehaving-http.ts";
import { standInOutbound } from "../../../../../../test/stand-ins/outbound.ts";
import { WorkflowError } from "../../core/errors.ts";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import type { ApiInput } from "./config.ts";
import { apiHandler } from "./handler.ts";
import { apiSecrets, buildApiRequest } from "./request.ts";

let target: MisbehavingServer;
beforeAll(async () => {
  target = await startMisbehavingServer();
});
afterAll(async () => {
  await target.close();
});

async function run(input: ApiInput, deadlineMs = 20_000) {
  const base = testRun(input, { deadline: Date.now() + deadlineMs });
  return await apiHandler.execute({ ...base, services: { ...base.services, outbound: standInOutbound() } });
}

async function failure(input: ApiInput, deadlineMs?: number): Promise<WorkflowError> {
  const error = await run(input, deadlineMs).then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof WorkflowError)) throw new Error(`expected a WorkflowError, got ${String(error)}`);
  return error;
}

interface Echo {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
}

describe("the API block's request", () => {
  it.each(["GET", "DELETE"] as const)("sends %s without a body", async (method) => {
    const output = await run({ url: `${target.url}/echo`, method });
    expect(output).toMatchObject({ status: 200, error: null, data: { method, body: "" } });
  });

  it.each(["POST", "PUT", "PATCH"] as const)("sends %s with the body as JSON", async (method) => {
    const output = await run({ url: `${target.url}/echo`, method, body: { name: "Ana", tags: ["a"] } });
    const echo = output.data as Echo;
    expect(echo.method).toBe(method);
    expect(echo.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(echo.body)).toEqual({ name: "Ana", tags: ["a"] });
  });

  it("uses GET when no method is set", async () => {
    expect(((await run({ url: `${target.url}/echo` })).data as Echo).method).toBe("GET");
  });

  it("refuses a body on GET and DELETE instead of dropping it", async () => {
    const error = await failure({ url: `${target.url}/echo`, method: "GET", body: { a: 1 } });
    expect(error.message).toBe("a GET request carries no body; use POST, PUT or PATCH, or remove body");
  });

  it("appends query parameters to those already in the URL: arrays repeat, numbers and booleans are spelled out, null is left out", async () => {
    const output = await run({ url: `${target.url}/echo?fixed=1`, query: { q: "café & co", page: 2, exact: true, tag: ["a", "b"], skipped: null } });
    const echo = output.data as Echo;
    expect(echo.path).toBe("/echo");
    expect(target.requests.at(-1)?.path).toBe("/echo?fixed=1&q=caf%C3%A9+%26+co&page=2&exact=true&tag=a&tag=b");
  });

  it("fills path parameters, encoded", async () => {
    await run({ url: `${target.url}/echo/{user}/orders/{id}`, pathParams: { user: "ana/souza", id: 42 } });
    expect(target.requests.at(-1)?.path).toBe("/echo/ana%2Fsouza/orders/42");
  });

  it("names a path parameter without a value", async () => {
    expect((await failure({ url: `${target.url}/echo/{id}` })).message).toBe("path parameter {id} has no value in pathParams");
  });

  it("sends headers, numbers as text", async () => {
    const echo = (await run({ url: `${target.url}/echo`, headers: { "X-Trace": "abc", "X-Count": 3 } })).data as Echo;
    expect(echo.headers["x-trace"]).toBe("abc");
    expect(echo.headers["x-count"]).toBe("3");
  });

  it("sends a text body as it is when the Content-Type is not JSON, and an object as a form when it is urlencoded", async () => {
    const text = (await run({ url: `${target.url}/echo`, method: "POST", headers: { "content-type": "text/plain" }, body: "just words" })).data as Echo;
    expect(text.body).toBe("just words");
    const form = (await run({ url: `${target.url}/echo`, method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: { a: "1 2", b: true } })).data as Echo;
    expect(form.body).toBe("a=1+2&b=true");
  });

  it("refuses a URL that is not absolute and a header that cannot be sent", async () => {
    expect((await failure({ url: "/relative" })).message).toBe('url "/relative" is not an absolute URL');
    expect((await failure({ url: 42 })).message).toBe("url must be text (got 42)");
    expect((await failure({ url: `${target.url}/echo`, headers: { "bad header": "x" } })).message).toMatch(/header "bad header" cannot be sent/);
  });
});

describe("the API block's output", () => {
  it("parses JSON, keeps text, gives null for an empty body, and lists the headers", async () => {
    const json = await run({ url: `${target.url}/json` });
    expect(json).toMatchObject({ data: { ok: true, items: [1, 2, 3] }, status: 200, error: null });
    expect((json.headers as Record<string, string>)["content-type"]).toBe("application/json");
    expect((await run({ url: `${target.url}/text` })).data).toBe("plain words");
    expect(await run({ url: `${target.url}/empty` })).toMatchObject({ data: null, status: 204 });
  });

  it("lists the one attempt a success took", async () => {
    const output = await run({ url: `${target.url}/json` });
    expect(output.attempts).toEqual([{ attempt: 1, startedAt: expect.any(String), durationMs: expect.any(Number), status: 200 }]);
  });

  it("follows redirects by default, and hands back the redirect with followRedirects: false", async () => {
    expect(await run({ url: `${target.url}/redirect?to=/json` })).toMatchObject({ status: 200, data: { ok: true } });
    const manual = await run({ url: `${target.url}/redirect?to=/json`, followRedirects: false });
    expect(manual).toMatchObject({ status: 302, data: null });
    expect((manual.headers as Record<string, string>).location).toBe("/json");
  });
});

describe("the API block's retries", () => {
  it("retries 503 answers until one succeeds", async () => {
    const output = await run({ url: `${target.url}/flaky/three?fail=2&status=503`, retryDelayMs: 10 });
    expect(output).toMatchObject({ status: 200, data: { attempts: 3 } });
    expect((output.attempts as { status: number }[]).map((attempt) => attempt.status)).toEqual([503, 503, 200]);
    expect(target.attempts("three")).toBe(3);
  });

  it.each([429, 500, 502, 504, 408])("retries a %s answer", async (status) => {
    const output = await run({ url: `${target.url}/flaky/s${status}?fail=1&status=${status}`, retryDelayMs: 10 });
    expect(output.status).toBe(200);
    expect(target.attempts(`s${status}`)).toBe(2);
  });

  it.each([400, 401, 403, 404, 409, 422])("does not retry a %s answer, and fails with its status and body", async (status) => {
    const error = await failure({ url: `${target.url}/status/${status}`, retryDelayMs: 10 });
    expect(error.code).toBe("HTTP_ERROR");
    expect(error.output).toMatchObject({ status, data: { status }, attempts: [{ attempt: 1, status }] });
  });

  it("retries connection resets and timeouts", async () => {
    expect(await run({ url: `${target.url}/flaky/resets?fail=2&mode=reset`, retryDelayMs: 10 })).toMatchObject({ status: 200, data: { attempts: 3 } });
    const output = await run({ url: `${target.url}/flaky/hangs?fail=1&mode=hang`, retryDelayMs: 10, requestTimeoutMs: 300 });
    expect(output).toMatchObject({ status: 200, data: { attempts: 2 } });
    expect((output.attempts as { code?: string }[])[0].code).toBe("OUTBOUND_TIMEOUT");
  });

  it("stops at the retry limit (3 by default, so 4 attempts) and fails with the last answer", async () => {
    const error = await failure({ url: `${target.url}/status/500`, retryDelayMs: 5 });
    expect(error.code).toBe("HTTP_ERROR");
    expect(error.message).toBe(`GET ${target.url}/status/500 answered 500 Internal Server Error after 4 attempts`);
    const attempts = error.output?.attempts as { status: number; gaveUp?: string }[];
    expect(attempts.map((attempt) => attempt.status)).toEqual([500, 500, 500, 500]);
    expect(attempts[3].gaveUp).toBe("no retries left (3 allowed)");
    expect(error.output).toMatchObject({ status: 500, data: { status: 500 } });
  });

  it("makes exactly one attempt with retries: 0, and as many as asked otherwise", async () => {
    await failure({ url: `${target.url}/flaky/none?fail=5`, retries: 0 });
    expect(target.attempts("none")).toBe(1);
    await failure({ url: `${target.url}/flaky/one?fail=5`, retries: 1, retryDelayMs: 5 });
    expect(target.attempts("one")).toBe(2);
  });

  it("waits with exponential backoff and jitter: each wait between half and all of base × 2^n", async () => {
    const error = await failure({ url: `${target.url}/status/503`, retries: 3, retryDelayMs: 100, retryMaxDelayMs: 10_000 });
    const waits = (error.output?.attempts as { retryInMs?: number }[]).map((attempt) => attempt.retryInMs);
    expect(waits).toHaveLength(4);
    expect(waits[3]).toBeUndefined();
    [100, 200, 400].forEach((nominal, index) => {
      expect(waits[index]).toBeGreaterThanOrEqual(nominal / 2);
      expect(waits[index]).toBeLessThanOrEqual(nominal);
    });
  });

  it("caps the backoff at retryMaxDelayMs", async () => {
    const error = await failure({ url: `${target.url}/status/503`, retries: 3, retryDelayMs: 100, retryMaxDelayMs: 150 });
    const waits = (error.output?.attempts as { retryInMs?: number }[]).slice(0, 3).map((attempt) => attempt.retryInMs ?? 0);
    expect(Math.max(...waits)).toBeLessThanOrEqual(150);
  });

  it("honours Retry-After in seconds", async () => {
    const started = Date.now();
    const output = await run({ url: `${target.url}/flaky/after?fail=1&status=429&retryAfter=1`, retryDelayMs: 10 });
    expect(output.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect((output.attempts as { retryInMs?: number }[])[0].retryInMs).toBe(1_000);
  });

  it("gives up when Retry-After asks for longer than retryMaxDelayMs", async () => {
    const error = await failure({ url: `${target.url}/status/429?retryAfter=120`, retryMaxDelayMs: 5_000 });
    const attempts = error.output?.attempts as { gaveUp?: string }[];
    expect(attempts).toHaveLength(1);
    expect(attempts[0].gaveUp).toBe("the server asked to wait 120000 ms, longer than the 5000 ms allowed");
  });

  it("does not start a retry that would end past the block's deadline", async () => {
    const error = await failure({ url: `${target.url}/status/503`, retries: 5, retryDelayMs: 5_000, retryMaxDelayMs: 5_000 }, 1_000);
    const attempts = error.output?.attempts as { gaveUp?: string }[];
    expect(attempts).toHaveLength(1);
    expect(attempts[0].gaveUp).toMatch(/^waiting \d+ ms for another attempt would pass the block's deadline$/);
  });

  it("does not retry a blocked address, a body over the cap or a protocol error", async () => {
    const blocked = await failure({ url: `${target.url}/redirect?to=${encodeURIComponent("http://10.0.0.1/")}` });
    expect(blocked.code).toBe("OUTBOUND_BLOCKED");
    expect(blocked.message).toBe(`GET ${target.url}/redirect?to=http%3A%2F%2F10.0.0.1%2F failed: a redirect to http://10.0.0.1/ was refused: 10.0.0.1 is a private address, which workflows may not call`);
    expect(blocked.output).toMatchObject({ status: null, data: null, attempts: [{ attempt: 1, code: "OUTBOUND_BLOCKED" }] });
    const large = await failure({ url: `${target.url}/huge?bytes=5000`, maxResponseBytes: 1_000 });
    expect(large.code).toBe("OUTBOUND_TOO_LARGE");
    expect((large.output?.attempts as unknown[]).length).toBe(1);
    expect((await failure({ url: `${target.url}/malformed` })).code).toBe("OUTBOUND_PROTOCOL");
  });

  it("reports an unreachable host after its retries", async () => {
    const closed = await startMisbehavingServer();
    await closed.close();
    const error = await failure({ url: `${closed.url}/json`, retries: 1, retryDelayMs: 5 });
    expect(error.code).toBe("OUTBOUND_CONNECTION");
    expect(error.message).toMatch(new RegExp(`^GET ${closed.url}/json failed after 2 attempts: could not connect to`));
  });
});

describe("the API block's credentials", () => {
  it("names credential headers and query parameters as secrets, and the token after Bearer", () => {
    expect(apiSecrets({ url: "x", headers: { Authorization: "Bearer tok-123456", "X-API-Key": "k-abcdefgh", Accept: "application/json" }, query: { api_key: "q-secret-1", page: 2 } }).sort()).toEqual(
      ["Bearer tok-123456", "k-abcdefgh", "q-secret-1", "tok-123456"].sort(),
    );
  });

  it("builds requests without touching the input", () => {
    const input: ApiInput = { url: "https://example.test/{id}", pathParams: { id: 1 }, query: { a: 1 } };
    const request = buildApiRequest(input);
    expect(request.url).toBe("https://example.test/1?a=1");
    expect(input.url).toBe("https://example.test/{id}");
  });
});
