import { createServer as createTlsServer, type Server as TlsServer } from "node:https";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMisbehavingServer, type MisbehavingServer } from "../../../../../test/stand-ins/misbehaving-http.ts";
import { makeTestCertificates, type TestCertificates } from "../../../../../test/stand-ins/tls.ts";
import { parseAllowList, parseDeniedAddresses } from "./addresses.ts";
import { checkOutboundUrl, guardedFetch, OutboundError, type OutboundPolicy } from "./guard.ts";

/** Names the tests make up, resolved without DNS. */
const NAMES: Record<string, string[]> = {
  "public.test": ["93.184.216.34"],
  "public6.test": ["2606:4700:4700::1111"],
  "metadata.google.internal": ["169.254.169.254"],
  "intranet.test": ["10.0.0.7"],
  "mixed.test": ["93.184.216.34", "192.168.0.10"],
  "stand-in.test": ["127.0.0.1"],
  "other-stand-in.test": ["127.0.0.1"],
};

function policy(allow = "", names = NAMES, lookups: string[] = []): OutboundPolicy {
  return {
    allow: parseAllowList(allow),
    resolve: async (host) => {
      lookups.push(host);
      const answer = names[host];
      if (!answer) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
      return answer;
    },
  };
}

/** Loopback allowed, as `npm test` runs the service. */
const LOCAL = policy("127.0.0.0/8,::1");

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof OutboundError)) throw new Error(`expected an OutboundError, got ${String(error)}`);
  return error;
}

describe("checkOutboundUrl: the private-address corpus", () => {
  const blocked = [
    "http://127.0.0.1/",
    "http://127.0.0.1:8080/admin",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::127.0.0.1]/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://2130706433/",
    "http://127.1/",
    "http://0x7f.0.0.1/",
    "http://017700000001/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
    "http://[fd00:ec2::254]/",
    "http://[fe80::1]/",
    "http://[::]/",
    "http://[64:ff9b::a00:1]/",
    "http://[2002:7f00:1::]/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "https://intranet.test/",
    "https://mixed.test/",
    "http://stand-in.test/",
  ];
  it.each(blocked)("refuses %s", async (url) => {
    const check = await checkOutboundUrl(url, policy());
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.code).toBe("OUTBOUND_BLOCKED");
      expect(check.reason).toMatch(/address, which workflows may not call$/);
    }
  });

  it("says which address a name resolved to and what kind it is", async () => {
    expect(await checkOutboundUrl("http://metadata.google.internal/", policy())).toEqual({
      ok: false,
      code: "OUTBOUND_BLOCKED",
      reason: "metadata.google.internal resolves to 169.254.169.254, a link-local (cloud metadata lives here) address, which workflows may not call",
    });
    expect(await checkOutboundUrl("http://0x7f000001/", policy())).toMatchObject({ reason: "127.0.0.1 is a loopback address, which workflows may not call" });
  });

  it.each(["http://93.184.216.34/", "https://public.test/path?q=1", "https://public6.test/", "http://[2606:4700:4700::1111]/", "http://[64:ff9b::5db8:d822]/"])("accepts the public %s", async (url) => {
    const check = await checkOutboundUrl(url, policy());
    expect(check.ok).toBe(true);
  });

  it("hands back the address to connect to", async () => {
    const check = await checkOutboundUrl("https://public.test/x", policy());
    expect(check).toMatchObject({ ok: true, address: "93.184.216.34", addresses: ["93.184.216.34"] });
  });

  it.each([
    ["ftp://public.test/file", /only http and https URLs/],
    ["file:///etc/passwd", /only http and https URLs/],
    ["gopher://public.test/", /only http and https URLs/],
    ["http://user:secret@public.test/", /user name or password/],
    ["not a url", /is not an absolute URL/],
    ["/relative/path", /is not an absolute URL/],
  ])("refuses %s as a URL it cannot call", async (url, reason) => {
    const check = await checkOutboundUrl(url, policy());
    expect(check).toMatchObject({ ok: false, code: "OUTBOUND_INVALID_URL", reason: expect.stringMatching(reason) });
  });

  it("reports a name that does not resolve as a connection failure, not a block", async () => {
    expect(await checkOutboundUrl("http://nowhere.test/", policy())).toMatchObject({ ok: false, code: "OUTBOUND_CONNECTION", reason: expect.stringMatching(/nowhere.test does not resolve/) });
  });

  it("lets the allow-list open ranges and hosts, and nothing more", async () => {
    expect((await checkOutboundUrl("http://127.0.0.1:9/", policy("127.0.0.0/8"))).ok).toBe(true);
    expect((await checkOutboundUrl("http://[::ffff:127.0.0.1]/", policy("127.0.0.0/8"))).ok).toBe(true);
    expect((await checkOutboundUrl("http://[::1]/", policy("127.0.0.0/8"))).ok).toBe(false);
    expect((await checkOutboundUrl("http://10.0.0.1/", policy("127.0.0.0/8"))).ok).toBe(false);
    expect((await checkOutboundUrl("http://intranet.test/", policy("intranet.test"))).ok).toBe(true);
    expect((await checkOutboundUrl("http://10.0.0.7/", policy("intranet.test"))).ok).toBe(false);
  });

  it("resolves localhost through the system resolver and refuses it", async () => {
    const check = await checkOutboundUrl("http://localhost:1/", { allow: parseAllowList(""), resolve: async (host) => (await import("node:dns/promises")).lookup(host, { all: true }).then((all) => all.map((a) => a.address)) });
    expect(check).toMatchObject({ ok: false, code: "OUTBOUND_BLOCKED", reason: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1), a loopback address/) });
  });
});

describe("checkOutboundUrl: ports, and a stack's own services", () => {
  // Shaped as a local stack configures the guard: loopback open on ranges around the stack's own
  // ports (54321–54324, 54336, 54346), and those ports denied at every address.
  const ownPorts = [54321, 54322, 54323, 54324, 54336, 54346];
  const stack = (allow: string): OutboundPolicy => ({
    ...policy(allow, { ...NAMES, "localhost.test": ["::1", "127.0.0.1"] }),
    deny: parseDeniedAddresses(ownPorts.flatMap((port) => [`0.0.0.0/0:${port}`, `[::/0]:${port}`]).join(",")),
  });
  const ranges = "127.0.0.0/8:1024-54320,127.0.0.0/8:54325-54335,127.0.0.0/8:54337-54345,127.0.0.0/8:54347-65535,[::1]:1024-54320,[::1]:54347-65535";

  it.each(["http://127.0.0.1:40000/", "http://127.0.0.1:54325/", "http://[::1]:60999/", "http://127.0.0.9:1024/", "http://stand-in.test:54347/", "http://[::ffff:127.0.0.1]:65535/"])("accepts %s, a port the allow-list opens", async (url) => {
    expect(await checkOutboundUrl(url, stack(ranges))).toMatchObject({ ok: true });
  });

  it.each(["http://127.0.0.1/", "http://127.0.0.1:22/", "https://127.0.0.1/", "http://[::1]:54330/"])("refuses %s, a loopback port the allow-list leaves closed", async (url) => {
    const check = await checkOutboundUrl(url, stack(ranges));
    expect(check).toMatchObject({ ok: false, code: "OUTBOUND_BLOCKED", reason: expect.stringMatching(/ is a loopback address, which workflows may not call on port \d+$/) });
  });

  it.each(ownPorts.flatMap((port) => [
    `http://127.0.0.1:${port}/query`,
    `http://127.0.0.2:${port}/`,
    `http://[::1]:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://0.0.0.0:${port}/`,
    `http://localhost.test:${port}/`,
    `http://stand-in.test:${port}/`,
  ]))("refuses %s, a port of the stack itself, whatever the allow-list says", async (url) => {
    for (const allow of [ranges, "127.0.0.0/8,::1,0.0.0.0/8", "0.0.0.0/0,::/0", "localhost.test,stand-in.test", "127.0.0.0/8:1-65535"]) {
      const check = await checkOutboundUrl(url, stack(allow));
      expect(check, allow).toMatchObject({ ok: false, code: "OUTBOUND_BLOCKED", reason: expect.stringMatching(/^port \d+ of .* is listed in OUTBOUND_DENIED_ADDRESSES \(the local stack's own services\), which workflows may not call$/) });
    }
  });

  it("names the address a name resolved to when it refuses a stack's own port", async () => {
    expect(await checkOutboundUrl("http://stand-in.test:54336/query", stack(ranges))).toEqual({
      ok: false,
      code: "OUTBOUND_BLOCKED",
      reason: "port 54336 of stand-in.test (127.0.0.1) is listed in OUTBOUND_DENIED_ADDRESSES (the local stack's own services), which workflows may not call",
    });
  });

  it("refuses a host name the denied list names, on its ports only", async () => {
    const deny: OutboundPolicy = { ...policy("0.0.0.0/0"), deny: parseDeniedAddresses("public.test:443") };
    expect(await checkOutboundUrl("https://public.test/", deny)).toMatchObject({ ok: false, code: "OUTBOUND_BLOCKED", reason: expect.stringMatching(/^port 443 of public.test is listed/) });
    expect(await checkOutboundUrl("http://public.test/", deny)).toMatchObject({ ok: true });
  });

  it("opens a host name on the listed port only", async () => {
    expect(await checkOutboundUrl("http://intranet.test:8080/", policy("intranet.test:8080"))).toMatchObject({ ok: true });
    expect(await checkOutboundUrl("http://intranet.test:8081/", policy("intranet.test:8080"))).toMatchObject({ ok: false, code: "OUTBOUND_BLOCKED" });
    expect(await checkOutboundUrl("http://intranet.test/", policy("intranet.test:8080"))).toMatchObject({ ok: false, code: "OUTBOUND_BLOCKED" });
  });
});

describe("guardedFetch against a misbehaving server", () => {
  let target: MisbehavingServer;
  beforeAll(async () => {
    target = await startMisbehavingServer();
  });
  afterAll(async () => {
    await target.close();
  });

  it("connects to the checked address and sends the URL's own host", async () => {
    const lookups: string[] = [];
    const response = await guardedFetch(`http://stand-in.test:${target.port}/echo?a=1`, { policy: policy("127.0.0.0/8", NAMES, lookups) });
    expect(response.status).toBe(200);
    const echo = (await response.json()) as { headers: Record<string, string>; query: unknown };
    expect(echo.headers.host).toBe(`stand-in.test:${target.port}`);
    expect(echo.query).toEqual({ a: "1" });
    // One lookup, checked; the socket went to that answer, so DNS had no second say.
    expect(lookups).toEqual(["stand-in.test"]);
  });

  it("cannot be rebound: a name whose second answer would be private is still called at the first", async () => {
    let calls = 0;
    const rebinding: OutboundPolicy = {
      allow: parseAllowList("rebind.test"),
      resolve: async () => (++calls === 1 ? ["127.0.0.1"] : ["10.9.9.9"]),
    };
    const response = await guardedFetch(`http://rebind.test:${target.port}/json`, { policy: rebinding, timeoutMs: 5_000 });
    expect(response.status).toBe(200);
    expect(calls).toBe(1);
  });

  it("sends the method, headers and body, and reads JSON, text and empty answers", async () => {
    const response = await guardedFetch(`${target.url}/echo`, { policy: LOCAL, method: "PATCH", headers: { "x-custom": "yes", "content-type": "application/json" }, body: JSON.stringify({ n: 1 }) });
    const echo = (await response.json()) as { method: string; headers: Record<string, string>; body: string };
    expect(echo.method).toBe("PATCH");
    expect(echo.headers["x-custom"]).toBe("yes");
    expect(echo.headers["content-length"]).toBe("7");
    expect(JSON.parse(echo.body)).toEqual({ n: 1 });
    expect(await (await guardedFetch(`${target.url}/text`, { policy: LOCAL })).text()).toBe("plain words");
    const empty = await guardedFetch(`${target.url}/empty`, { policy: LOCAL });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it("reads chunked bodies and decompresses gzip", async () => {
    expect(await (await guardedFetch(`${target.url}/huge?bytes=200000&chunked=1`, { policy: LOCAL })).text()).toHaveLength(200_000);
    expect(await (await guardedFetch(`${target.url}/gzip`, { policy: LOCAL })).json()).toEqual({ compressed: true });
  });

  it("refuses a redirect to a private address, even with loopback allowed", async () => {
    const error = await failure(guardedFetch(`${target.url}/redirect?to=${encodeURIComponent("http://169.254.169.254/latest/meta-data/")}`, { policy: LOCAL }));
    expect(error.code).toBe("OUTBOUND_BLOCKED");
    expect(error.message).toBe("a redirect to http://169.254.169.254/latest/meta-data/ was refused: 169.254.169.254 is a link-local (cloud metadata lives here) address, which workflows may not call");
  });

  it("refuses a redirect to a port the denied list names, though the target itself is allowed", async () => {
    const guarded: OutboundPolicy = { ...LOCAL, deny: parseDeniedAddresses("127.0.0.0/8:54336") };
    expect((await guardedFetch(`${target.url}/json`, { policy: guarded })).status).toBe(200);
    const error = await failure(guardedFetch(`${target.url}/redirect?to=${encodeURIComponent("http://127.0.0.1:54336/query")}`, { policy: guarded }));
    expect(error.code).toBe("OUTBOUND_BLOCKED");
    expect(error.message).toBe("a redirect to http://127.0.0.1:54336/query was refused: port 54336 of 127.0.0.1 is listed in OUTBOUND_DENIED_ADDRESSES (the local stack's own services), which workflows may not call");
  });

  it("refuses a redirect from an allowed host to loopback when only that host is allowed", async () => {
    const onlyTheHost = policy("stand-in.test");
    const ok = await guardedFetch(`http://stand-in.test:${target.port}/json`, { policy: onlyTheHost });
    expect(ok.status).toBe(200);
    for (const to of [`http://127.0.0.1:${target.port}/json`, `http://0x7f000001:${target.port}/json`, `http://[::ffff:127.0.0.1]:${target.port}/json`, `http://2130706433:${target.port}/json`]) {
      const error = await failure(guardedFetch(`http://stand-in.test:${target.port}/redirect?to=${encodeURIComponent(to)}`, { policy: onlyTheHost }));
      expect(error.code).toBe("OUTBOUND_BLOCKED");
    }
  });

  it("follows redirects up to the limit, re-checking each hop", async () => {
    const twice = `${target.url}/redirect?to=${encodeURIComponent(`/redirect?to=${encodeURIComponent("/json")}`)}`;
    expect((await guardedFetch(twice, { policy: LOCAL })).status).toBe(200);
    const error = await failure(guardedFetch(twice, { policy: LOCAL, maxRedirects: 1 }));
    expect(error.code).toBe("OUTBOUND_TOO_MANY_REDIRECTS");
    const manual = await guardedFetch(twice, { policy: LOCAL, redirect: "manual" });
    expect(manual.status).toBe(302);
  });

  it("turns POST into GET on 303 and keeps the method and body on 307", async () => {
    const see = await guardedFetch(`${target.url}/redirect?status=303&to=/echo`, { policy: LOCAL, method: "POST", body: "payload" });
    expect(await see.json()).toMatchObject({ method: "GET", body: "" });
    const temporary = await guardedFetch(`${target.url}/redirect?status=307&to=/echo`, { policy: LOCAL, method: "POST", body: "payload" });
    expect(await temporary.json()).toMatchObject({ method: "POST", body: "payload" });
  });

  it("drops credentials on a redirect to another origin, keeps them on the same one", async () => {
    const sameOrigin = await guardedFetch(`${target.url}/redirect?to=/echo`, { policy: LOCAL, headers: { authorization: "Bearer same-origin-token" } });
    expect(((await sameOrigin.json()) as { headers: Record<string, string> }).headers.authorization).toBe("Bearer same-origin-token");
    const elsewhere = `http://other-stand-in.test:${target.port}/echo`;
    const crossOrigin = await guardedFetch(`${target.url}/redirect?to=${encodeURIComponent(elsewhere)}`, { policy: LOCAL, headers: { authorization: "Bearer cross-origin-token", cookie: "a=b" } });
    const headers = ((await crossOrigin.json()) as { headers: Record<string, string> }).headers;
    expect(headers.authorization).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
  });

  it("gives up on a server that never answers, within the time limit", async () => {
    const started = Date.now();
    const error = await failure(guardedFetch(`${target.url}/hang`, { policy: LOCAL, timeoutMs: 300 }));
    expect(error.code).toBe("OUTBOUND_TIMEOUT");
    expect(error.message).toBe(`no complete answer from 127.0.0.1:${target.port} within 300 ms`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("keeps the time limit while the body streams", async () => {
    const response = await guardedFetch(`${target.url}/stall`, { policy: LOCAL, timeoutMs: 300 });
    expect(response.status).toBe(200);
    const error = await failure(response.text());
    expect(error.code).toBe("OUTBOUND_TIMEOUT");
  });

  it("refuses a body over the cap, announced or streamed", async () => {
    const announced = await failure(guardedFetch(`${target.url}/huge?bytes=2000000`, { policy: LOCAL, maxResponseBytes: 1_000_000 }));
    expect(announced).toMatchObject({ code: "OUTBOUND_TOO_LARGE", message: `the response from 127.0.0.1:${target.port} is 2000000 bytes, more than the 1000000 allowed` });
    const streamed = await guardedFetch(`${target.url}/huge?bytes=2000000&chunked=1`, { policy: LOCAL, maxResponseBytes: 1_000_000 });
    const error = await failure(streamed.arrayBuffer());
    expect(error).toMatchObject({ code: "OUTBOUND_TOO_LARGE", message: `the response from 127.0.0.1:${target.port} is larger than 1000000 bytes` });
  });

  it("reports resets, refused connections and answers that are not HTTP", async () => {
    expect((await failure(guardedFetch(`${target.url}/reset`, { policy: LOCAL }))).code).toBe("OUTBOUND_CONNECTION");
    expect((await failure(guardedFetch(`${target.url}/malformed`, { policy: LOCAL }))).code).toBe("OUTBOUND_PROTOCOL");
    const closed = await startMisbehavingServer();
    const port = closed.port;
    await closed.close();
    const refused = await failure(guardedFetch(`http://127.0.0.1:${port}/json`, { policy: LOCAL }));
    expect(refused.code).toBe("OUTBOUND_CONNECTION");
    expect(refused.message).toMatch(new RegExp(`^could not connect to 127.0.0.1:${port} \\(127.0.0.1\\): .*ECONNREFUSED`));
  });

  it("stops when the caller's signal aborts, with the caller's reason", async () => {
    const controller = new AbortController();
    const pending = guardedFetch(`${target.url}/hang`, { policy: LOCAL, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("the block timed out")), 50);
    await expect(pending).rejects.toThrow("the block timed out");
  });
});

describe("guardedFetch over TLS to a pinned address", () => {
  let certificates: TestCertificates;
  let server: TlsServer;
  let port: number;
  beforeAll(async () => {
    certificates = makeTestCertificates(["secure.test"]);
    server = createTlsServer({ key: certificates.key, cert: certificates.cert }, (request, response) => {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ host: request.headers.host, servername: (request.socket as { servername?: string }).servername }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const names = { "secure.test": ["127.0.0.1"], "impostor.test": ["127.0.0.1"] };

  it("verifies the certificate against the host name sent as SNI, while connecting to the checked address", async () => {
    const response = await guardedFetch(`https://secure.test:${port}/`, { policy: policy("127.0.0.0/8", names), caCerts: [certificates.ca] });
    expect(await response.json()).toEqual({ host: `secure.test:${port}`, servername: "secure.test" });
  });

  it("gives up on a TLS handshake that never ends, within the time limit", async () => {
    const silent = createTcpServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const silentPort = (silent.address() as AddressInfo).port;
    try {
      const error = await failure(guardedFetch(`https://127.0.0.1:${silentPort}/`, { policy: policy("127.0.0.0/8"), timeoutMs: 300 }));
      expect(error.code).toBe("OUTBOUND_TIMEOUT");
    } finally {
      silent.close();
    }
  });

  it("refuses a certificate for another name, and one from an untrusted authority", async () => {
    const wrongName = await failure(guardedFetch(`https://impostor.test:${port}/`, { policy: policy("127.0.0.0/8", names), caCerts: [certificates.ca] }));
    expect(wrongName.code).toBe("OUTBOUND_CONNECTION");
    expect(wrongName.message).toMatch(/impostor\.test/);
    const untrusted = await failure(guardedFetch(`https://secure.test:${port}/`, { policy: policy("127.0.0.0/8", names) }));
    expect(untrusted.code).toBe("OUTBOUND_CONNECTION");
  });
});
