import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signHs256 } from "../../platform/keys/api-keys.ts";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

/**
 * Sends `count` requests from one simulated client (connecting from `address`) and returns the
 * statuses and the last response; `headersFor(i)` adds headers to the i-th request.
 */
async function burst(count: number, path: string, address: string, init: RequestInit = {}, headersFor: (i: number) => Record<string, string> = () => ({})) {
  const device = fetchFrom(address);
  const statuses: number[] = [];
  let last: Response | undefined;
  for (let i = 0; i < count; i++) {
    last = await device(`${env.url}${path}`, { ...init, headers: { apikey: env.anonKey, ...init.headers, ...headersFor(i) } });
    statuses.push(last.status);
    if (i < count - 1) await last.arrayBuffer();
  }
  return { statuses, last: last as Response };
}

/** A request body of unknown length (sent chunked): `text` in 64 KiB pieces. */
function chunkedBody(text: string): { body: ReadableStream<Uint8Array>; duplex: "half" } {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(offset, (offset += 65_536)));
    },
  });
  return { body, duplex: "half" };
}

describe("API gateway", () => {
  it("answers CORS preflights and tags every response with a request id", async () => {
    const preflight = await fetch(`${env.url}/rest/v1/demo_projects`, {
      method: "OPTIONS",
      headers: { origin: "http://app.example", "access-control-request-method": "POST", "access-control-request-headers": "apikey, content-type" },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("apikey");
    const response = await fetch(`${env.url}/rest/v1/demo_projects?select=id&limit=1`, { headers: { apikey: env.anonKey, "x-request-id": "trace-123" } });
    expect(response.headers.get("sb-request-id")).toBe("trace-123");
  });

  it("answers an unknown route with 404 and a message", async () => {
    const response = await fetch(`${env.url}/nowhere/v1/x`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: "no Route matched with those values" });
  });

  it("refuses a data-API body over 10 MiB with 413, naming the limit", async () => {
    const response = await fetch(`${env.url}/rest/v1/demo_tasks`, {
      method: "POST",
      headers: { apikey: env.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ title: "x".repeat(11 * 1024 * 1024) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: "payload_too_large", message: "Request body exceeds the 10 MiB limit" });
  });

  it("counts a data-API body of unknown length against the same 10 MiB, and passes one under it to PostgREST", async () => {
    const rpc = `${env.url}/rest/v1/rpc/test_caller_context`;
    const headers = { apikey: env.anonKey, "content-type": "application/json" };
    const call = (texto: string) => ({ method: "POST", headers, ...chunkedBody(JSON.stringify({ p_texto: texto, p_numero: 1, p_id: null, p_doc: null })) }) as RequestInit;
    const tooLarge = await fetch(rpc, call("x".repeat(11 * 1024 * 1024)));
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({ code: "payload_too_large", message: "Request body exceeds the 10 MiB limit", details: null, hint: null });
    const passed = await fetch(rpc, call("y".repeat(2 * 1024 * 1024)));
    expect(passed.status).toBe(200);
    const echoed = (await passed.json()) as { texto: string; role: string };
    expect(echoed.role).toBe("anon");
    expect(echoed.texto).toHaveLength(2 * 1024 * 1024);
  });

  it("counts an auth body of unknown length against its 1 MiB, in GoTrue's shape", async () => {
    const response = await fetch(`${env.url}/auth/v1/signup`, {
      method: "POST",
      headers: { apikey: env.anonKey, "content-type": "application/json" },
      ...chunkedBody(JSON.stringify({ email: `${randomUUID()}@example.test`, password: "x".repeat(2 * 1024 * 1024) })),
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ code: "payload_too_large", message: "Request body exceeds the 1 MiB limit" });
  });

  it("refuses a data-API query whose escapes are not UTF-8 with 400 in PostgREST's shape, and passes one that is", async () => {
    const device = fetchFrom(simulatedClientAddress());
    // A lone byte, a bad continuation, an overlong NUL, a UTF-16 surrogate, a code point past U+10FFFF, a truncated sequence.
    for (const escapes of ["%FF", "%C3%28", "%C0%80", "%ED%A0%80", "%F4%90%80%80", "%E0%A4%A"]) {
      const response = await device(`${env.url}/rest/v1/demo_projects?select=id${escapes}`, { headers: { apikey: env.anonKey } });
      expect(response.status, escapes).toBe(400);
      expect(await response.json()).toEqual({ code: "PGRST100", details: null, hint: null, message: "The query string's percent-escapes do not decode to UTF-8" });
    }
    const decoded = await device(`${env.url}/rest/v1/demo_projects?select=%69%64&limit=1`, { headers: { apikey: env.anonKey } });
    expect(decoded.status).toBe(200);
  });

  it("limits the data API to 200 requests a minute per client, then answers 429 with Retry-After", async () => {
    const { statuses, last } = await burst(201, "/rest/v1/demo_projects?select=id&limit=1", simulatedClientAddress());
    expect(statuses.slice(0, 200).every((status) => status === 200)).toBe(true);
    expect(last.status).toBe(429);
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await last.json()).toMatchObject({ code: "rate_limit_exceeded", message: "Rate limit exceeded: 200 requests per minute", details: null, hint: null });
  });

  it("limits auth to 60 requests a minute per client, in GoTrue's error shape", async () => {
    const { statuses, last } = await burst(61, "/auth/v1/health", simulatedClientAddress());
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true);
    expect(last.status).toBe(429);
    expect(last.headers.get("retry-after")).not.toBeNull();
    expect(await last.json()).toEqual({ code: "over_request_rate_limit", message: "Request rate limit reached" });
  });

  it("limits functions to 500 requests a minute per client", async () => {
    const { statuses, last } = await burst(501, "/functions/v1/no-such-function", simulatedClientAddress());
    expect(statuses.slice(0, 500).every((status) => status === 404)).toBe(true);
    expect(last.status).toBe(429);
    expect(await last.json()).toMatchObject({ code: "rate_limit_exceeded" });
  });

  it("counts a signed-in user's requests by user, whatever address they come from", async () => {
    const token = signHs256({ sub: randomUUID(), role: "authenticated", aud: "authenticated", exp: Math.floor(Date.now() / 1000) + 600 }, env.jwtSecret);
    const headers = { authorization: `Bearer ${token}` };
    const first = await burst(100, "/rest/v1/demo_projects?select=id&limit=1", simulatedClientAddress(), { headers });
    const second = await burst(101, "/rest/v1/demo_projects?select=id&limit=1", simulatedClientAddress(), { headers });
    expect([...first.statuses, ...second.statuses.slice(0, 100)].every((status) => status === 200)).toBe(true);
    expect(second.last.status).toBe(429);
  });

  it("ignores an X-Forwarded-For a client sends itself: a new value each request still spends one budget", async () => {
    const { statuses, last } = await burst(61, "/auth/v1/health", simulatedClientAddress(), {}, (i) => ({ "x-forwarded-for": `203.0.113.${i + 1}` }));
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true);
    expect(last.status).toBe(429);
  });

  it("tells the data API the client's own address, not the one the client claims", async () => {
    const address = simulatedClientAddress();
    const response = await fetchFrom(address)(`${env.url}/rest/v1/rpc/fixture_forwarded_for`, {
      method: "POST",
      headers: { apikey: env.anonKey, "content-type": "application/json", "x-forwarded-for": "203.0.113.7, 198.51.100.2" },
      body: "{}",
    });
    expect(await response.json()).toBe(address);
  });

  it("believes X-Forwarded-For only from a trusted proxy, read from the right, up to a malformed entry", async () => {
    // 127.0.0.2 is the functions host's egress address, which the gateway always trusts.
    const proxy = fetchFrom("127.0.0.2");
    const sawFor = async (forwarded: string) => {
      const response = await proxy(`${env.url}/rest/v1/rpc/fixture_forwarded_for`, {
        method: "POST",
        headers: { apikey: env.anonKey, "content-type": "application/json", "x-forwarded-for": forwarded },
        body: "{}",
      });
      return response.json();
    };
    const client = simulatedClientAddress();
    expect(await sawFor(`203.0.113.7, ${client}`)).toBe(client);
    expect(await sawFor(`::ffff:${client}`)).toBe(client);
    expect(await sawFor(`${client}, not-an-address`)).toBe("127.0.0.2");
  });

  it("counts a function's data-API call for an anonymous visitor against that visitor (the approval page's case)", async () => {
    const address = simulatedClientAddress();
    const response = await fetchFrom(address)(`${env.url}/functions/v1/fixture-forwarded`, { headers: { "x-forwarded-for": "203.0.113.8" } });
    expect(await response.json()).toEqual({ visitor: address, dataApiSaw: address, error: null });
  });

  it("does not count requests made with the service_role key, which only trusted server code holds", async () => {
    const { statuses } = await burst(205, "/rest/v1/demo_projects?select=id&limit=1", simulatedClientAddress(), {
      headers: { apikey: env.serviceRoleKey, authorization: `Bearer ${env.serviceRoleKey}` },
    });
    expect(statuses.every((status) => status === 200)).toBe(true);
  });
});
