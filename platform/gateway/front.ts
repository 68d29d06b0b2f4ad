/**
 * The gateway's public half: HAProxy on the gateway port, with the duties in front.lua, proxying
 * the data API straight to PostgREST, functions to the functions host and /pg to postgres-meta on
 * kept-alive connections, and auth and storage to the node half (platform/gateway/app.ts). Its
 * configuration is written here, from the same TypeScript constants the rest of the platform uses,
 * into the stack's folder. HAProxy rather than nginx: nginx refuses a path with a malformed
 * percent-escape (`/api/x/%zz`) with its own HTML 400 before any route is chosen, while Supabase's
 * services (and the fuzz suite) expect such a request to reach the service and be answered in its shape.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT, type StackConfig } from "../config/stack-config.ts";
import { FUNCTIONS_EGRESS_ADDRESS } from "../functions-host/host-config.ts";
import { processService } from "../process/children.ts";
import { waitForPort } from "../process/ports.ts";
import type { ServiceDefinition } from "../process/supervisor.ts";
import { loadStorageSettings } from "../storage/settings.ts";
import { tooLargeAnswer, upstreamError, type GatewayAnswer, type Upstream } from "./error-shapes.ts";
import { GATEWAY_CREDENTIAL_HEADER, GATEWAY_CREDENTIAL_VARIABLE, readGatewayCredential } from "./internal-credential.ts";
import { parseTrustedProxies } from "./trusted-proxies.ts";

/** Debian's HAProxy (2.6 on bookworm, built with Lua 5.3). */
export const HAPROXY = "/usr/sbin/haproxy";

/** Requests allowed per minute for each route family, per user (JWT `sub`) or client address (decisions.md). */
export const RATE_LIMITS = { rest: 200, auth: 60, functions: 500 } as const;

/** Room for multipart framing around an upload of the largest allowed size. */
const MULTIPART_ALLOWANCE = 1024 * 1024;

/**
 * Largest request body the gateway accepts for each service, in bytes: judged by Content-Length,
 * and for a body of unknown length (chunked) counted as it arrives by the node half (data API,
 * auth, storage) or by the function itself. Storage's follows the configured file size limit so
 * config.toml stays the one setting.
 */
export function bodyLimits(): Record<Upstream, number> {
  return {
    rest: 10 * 1024 * 1024,
    auth: 1024 * 1024,
    storage: loadStorageSettings().fileSizeLimit + MULTIPART_ALLOWANCE,
    // Above the workflow execute endpoint's own 32 MiB cap (an inline file may be 20 MB, 27 MB as
    // base64), so that endpoint answers bodies between the two in its own {error, code} shape.
    functions: 64 * 1024 * 1024,
    // postgres-meta's own default body limit (PG_META_MAX_BODY_LIMIT_MB).
    meta: 3 * 1024 * 1024,
  };
}

/** Headers every answer carries unless its service set them: Kong's CORS plugin as `supabase start` configures it. */
export const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
  "access-control-allow-headers":
    "authorization, x-client-info, apikey, content-type, content-profile, accept-profile, prefer, range, x-upsert, x-retry-count, x-supabase-api-version, x-execution-mode, x-execution-timeout-seconds, idempotency-key, x-api-key, x-service-secret, cache-control, traceparent, tracestate, baggage",
  "access-control-expose-headers":
    "content-range, range, content-location, preference-applied, location, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, sb-request-id, x-request-id",
  "access-control-max-age": "86400",
};

/**
 * Largest request head (request line and headers) the gateway passes on: node's default, which
 * the gateway kept when it was a node server. PostgREST and Deno answer an over-long head outside
 * their error shapes, so it is refused before them.
 */
const MAX_REQUEST_HEAD_BYTES = 16 * 1024;

/** Query parameters PostgREST reads that do not filter rows. */
const NON_FILTER_PARAMS = ["select", "order", "limit", "offset", "columns", "on_conflict"];

/** Route prefixes and their services, in the order they are tried. */
const PREFIXES: [string, Upstream][] = [["/rest/v1", "rest"], ["/auth/v1", "auth"], ["/storage/v1", "storage"], ["/functions/v1", "functions"], ["/pg", "meta"]];

/** The path on the node half where front.lua has a bearer token verified. */
export const VERIFIER_PATH = "/_verify";

/** The answers the gateway gives itself for one service. */
function answersFor(upstream: Upstream, limits: Record<Upstream, number>): Record<string, GatewayAnswer> {
  const limit = upstream in RATE_LIMITS ? RATE_LIMITS[upstream as keyof typeof RATE_LIMITS] : 0;
  const unfiltered = (statement: string): GatewayAnswer => ({
    status: 400,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code: "21000", details: null, hint: null, message: `${statement} requires a WHERE clause` }),
  });
  return {
    rateLimited: upstream === "auth"
      ? upstreamError(upstream, 429, "over_request_rate_limit", "Request rate limit reached")
      : upstreamError(upstream, 429, "rate_limit_exceeded", `Rate limit exceeded: ${limit} requests per minute`),
    tooLarge: tooLargeAnswer(upstream, limits[upstream]),
    noApiKey: upstreamError(upstream, 401, "no_api_key", "No API key found in request"),
    forbidden: upstreamError(upstream, 403, "forbidden", "You cannot consume this service"),
    unfilteredUpdate: unfiltered("UPDATE"),
    unfilteredDelete: unfiltered("DELETE"),
    // PostgREST 12.0.2 answers such a query with a 500 outside its error shape; PGRST100 is its
    // own code for a query string it cannot parse.
    queryNotUtf8: upstreamError(upstream, 400, "PGRST100", "The query string's percent-escapes do not decode to UTF-8"),
  };
}

/** A Lua literal for a JSON-like value (strings as decimal byte escapes where not plain ASCII). */
function lua(value: unknown): string {
  if (typeof value === "string") {
    return `"${[...Buffer.from(value, "utf8")].map((byte) => (byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, "0")}`)).join("")}"`;
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `{ ${value.map(lua).join(", ")} }`;
  const entries = Object.entries(value as Record<string, unknown>).map(([key, entry]) => `[${lua(key)}] = ${lua(entry)}`);
  return `{ ${entries.join(", ")} }`;
}

/** A raw HTTP answer for HAProxy's errorfile: the service's 502 shape when it cannot be reached. */
function unreachableFile(upstream: Upstream): string {
  const answer = upstreamError(upstream, 502, "upstream_unavailable", `The ${upstream} service is not reachable`);
  const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(answer.body)), "cache-control": "no-cache", connection: "close" };
  return `HTTP/1.1 502 Bad Gateway\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("")}\r\n${answer.body}`;
}

/** Where a stack's generated HAProxy files live. */
function frontDir(config: StackConfig): string {
  return join(config.runtimeDir, "gateway");
}

/**
 * The rule that adds the gateway's credential, replacing any value a client sent. HAProxy expands
 * the environment variable when it reads its configuration, so the secret is in no file but the
 * credential's own (internal-credential.ts).
 */
const CREDENTIAL_RULE = `  http-request set-header ${GATEWAY_CREDENTIAL_HEADER} "\${${GATEWAY_CREDENTIAL_VARIABLE}}"`;

/** Writes the HAProxy configuration, front.lua's settings and the trusted-proxy map; returns the configuration's path. */
export function writeFrontConfig(config: StackConfig): string {
  const dir = frontDir(config);
  mkdirSync(dir, { recursive: true });
  const limits = bodyLimits();
  const upstreams: Upstream[] = ["rest", "auth", "storage", "functions", "meta"];
  const trustedMap = join(dir, "trusted-proxies.map");
  const trusted = [...parseTrustedProxies(config.trustedProxies, "ORBITA_TRUSTED_PROXIES"), FUNCTIONS_EGRESS_ADDRESS];
  writeFileSync(trustedMap, trusted.map((entry) => `${entry} 1\n`).join(""));
  const settings = {
    trustedMap,
    verifierUrl: `http://127.0.0.1:${config.ports.gatewayInner}${VERIFIER_PATH}`,
    // The credential itself reaches front.lua through HAProxy's environment, as it reaches haproxy.cfg.
    credentialHeader: GATEWAY_CREDENTIAL_HEADER,
    credentialVariable: GATEWAY_CREDENTIAL_VARIABLE,
    claimsCapacity: 10_000,
    maxHeadBytes: MAX_REQUEST_HEAD_BYTES,
    keys: { secret: config.secretKey, publishable: config.publishableKey, serviceRole: config.serviceRoleKey, anon: config.anonKey },
    rateLimits: RATE_LIMITS,
    bodyLimits: limits,
    nonFilterParams: Object.fromEntries(NON_FILTER_PARAMS.map((name) => [name, true])),
    prefixes: PREFIXES,
    answers: {
      noRoute: { status: 404, headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "no Route matched with those values" }) },
      preflight: { status: 200, headers: {}, body: "" },
      headTooLarge: { status: 431, headers: { connection: "close" }, body: "" },
      ...Object.fromEntries(upstreams.map((upstream) => [upstream, answersFor(upstream, limits)])),
    },
  };
  const settingsFile = join(dir, "settings.lua");
  // The keys are secrets: the settings file is readable by its owner only.
  writeFileSync(settingsFile, `return ${lua(settings)}\n`, { mode: 0o600 });
  // writeFileSync's mode applies only to a file it creates; one left by an earlier start keeps its own.
  chmodSync(settingsFile, 0o600);
  for (const upstream of upstreams) writeFileSync(join(dir, `${upstream}-unreachable.http`), unreachableFile(upstream));

  const { ports } = config;
  const servers: Record<Upstream, number> = { rest: ports.postgrest, auth: ports.gatewayInner, storage: ports.gatewayInner, functions: ports.functions, meta: ports.pgMeta };
  const quoted = (text: string) => `"${text}"`;
  // A backend for `upstream`'s server (or `port`), answering in its 502 shape when it cannot be reached.
  const backend = (name: string, upstream: Upstream, options: string[], port = servers[upstream]) => [
    `backend ${name}`,
    ...options,
    ...[502, 503, 504].map((status) => `  errorfile ${status} ${join(dir, `${upstream}-unreachable.http`)}`),
    `  server ${upstream} 127.0.0.1:${port}`,
  ];
  const lines = [
    "global",
    "  nbthread 1",
    "  maxconn 8192",
    // Room for request heads up to 1 MiB, so that front.lua, not HAProxy's parser, refuses a head
    // over MAX_REQUEST_HEAD_BYTES, with the empty 431 clients got from node (HAProxy answers a
    // longer one with its own 400). A buffer is taken only while a request or answer is in flight.
    "  tune.bufsize 1048576",
    `  setenv ORBITA_GATEWAY_SETTINGS ${settingsFile}`,
    `  lua-load ${join(PROJECT_ROOT, "platform", "gateway", "front.lua")}`,
    "defaults",
    "  mode http",
    "  option http-keep-alive",
    // A client that goes away closes the upstream connection even before the answer begins, as
    // Kong does, so an edge function sees its request.signal abort (a cancelled run stops).
    "  option abortonclose",
    "  timeout connect 5s",
    "  timeout http-request 60s",
    // Idle keep-alive connections stay open far longer than clients keep them: Node's fetch (undici)
    // drops an idle one after 4 s, and one HAProxy closed at 5 s could be picked for a request a
    // busy client's late timer still thought alive, which failed with EPIPE. 75 s is nginx's default.
    "  timeout http-keep-alive 75s",
    // An edge function may stream (SSE) for as long as its wall clock allows; the host enforces it.
    "  timeout client 1h",
    "  timeout server 1h",
    "  timeout tunnel 1h",
    "  retries 3",
    "frontend gateway",
    `  bind 127.0.0.1:${ports.gateway}`,
    "  http-request lua.orbita_gateway",
    "  http-request use-service lua.orbita_too_large if { var(txn.too_large) -m found }",
    // The headers every proxied request gets, set natively: cheaper than from Lua, and reached
    // only by requests the action let through (a refusal or the 413 service ends the rules).
    // Loopback hops gain nothing from compression; ask every upstream for identity.
    "  http-request set-header accept-encoding identity",
    "  http-request set-header x-forwarded-for %[var(txn.client)]",
    "  http-request set-header x-forwarded-host %[req.fhdr(host)] if { req.fhdr(host) -m found }",
    "  http-request set-header x-forwarded-proto http",
    // PostgREST (warp) closes its connection after answering a HEAD, a moment after the answer. A
    // pooled connection handed to the next request in that moment fails it (a 502, or the client's
    // connection dropped), so a HEAD gets a connection of its own that is never pooled.
    "  use_backend rest_head if METH_HEAD { var(txn.upstream) -m str rest }",
    "  use_backend %[var(txn.upstream)]",
    ...Object.entries(CORS_HEADERS).map(([name, value]) => `  http-after-response set-header ${name} ${quoted(value)} unless { res.hdr(${name}) -m found }`),
    ...["sb-request-id", "x-request-id"].map((name) => `  http-after-response set-header ${name} %[var(txn.request_id)] if { var(txn.request_id) -m found } !{ res.hdr(${name}) -m found }`),
    ...upstreams.flatMap((upstream) => backend(upstream, upstream, [
      "  http-reuse always",
      // The node half serves auth and storage on one port and tells them apart by this header.
      ...(upstream === "auth" || upstream === "storage" ? [`  http-request set-header x-orbita-service ${upstream}`] : []),
      // pg-meta and the node half answer only requests carrying the gateway's credential; PostgREST
      // and the functions host, which check tokens themselves, are never sent it.
      ...(upstream === "auth" || upstream === "storage" || upstream === "meta" ? [CREDENTIAL_RULE] : []),
    ])),
    ...backend("rest_head", "rest", ["  option http-server-close"]),
    // A data-API body of unknown length, counted against its cap by the node half on its way to PostgREST.
    ...backend("rest_counted", "rest", ["  http-reuse always", "  http-request set-header x-orbita-service rest", CREDENTIAL_RULE], ports.gatewayInner),
  ];
  const configFile = join(dir, "haproxy.cfg");
  writeFileSync(configFile, `${lines.join("\n")}\n`);
  return configFile;
}

/**
 * glibc's allocator settings for HAProxy. Its 1 MiB buffers (tune.bufsize below) are over glibc's
 * default mmap threshold (128 KiB) and, freed at the top of the heap, over its trim threshold, so
 * by default each buffer HAProxy takes from the allocator is mapped (or the heap grown) and
 * faulted in again and handed back to the kernel when freed: about 20 µs of HAProxy's CPU per
 * proxied request (docs/performance.md). Serving them from a heap that keeps up to 32 MiB free
 * costs no more than 16 KiB buffers would.
 */
const HAPROXY_MALLOC = { MALLOC_MMAP_THRESHOLD_: String(4 * 1024 * 1024), MALLOC_TRIM_THRESHOLD_: String(32 * 1024 * 1024) };

/** The gateway's public half as a supervised service: HAProxy in the foreground, its configuration written first. */
export function gatewayFrontService(config: StackConfig): ServiceDefinition {
  const configFile = writeFrontConfig(config);
  return processService(config, {
    name: "gateway",
    command: HAPROXY,
    args: ["-db", "-f", configFile],
    env: { ...HAPROXY_MALLOC, [GATEWAY_CREDENTIAL_VARIABLE]: readGatewayCredential(config) },
    ready: () => waitForPort(config.ports.gateway, "The API gateway"),
  });
}
