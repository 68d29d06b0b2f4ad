import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StackConfig } from "../config.ts";
import type { FetchHandler } from "../http.ts";
import type { VerificationKeys, VerifiedClaims } from "../jwt.ts";
import { ClaimsCache } from "./claims-cache.ts";
import { stackKeys } from "../auth/signing-keys.ts";
import { clientAddressOf, TrustedProxies } from "./client-address.ts";
import { upstreamError, type Upstream } from "./error-shapes.ts";
import { translateAuthorization } from "./key-translation.ts";
import { RateLimiter, type LimitedRoute } from "./rate-limit.ts";
import { unfilteredWriteError } from "./safe-update.ts";
import { incomingHeaderReader } from "./header-reader.ts";
import { sendWebResponse } from "./node-response.ts";
import { proxyToUpstream } from "./upstream-proxy.ts";

/**
 * Largest request body the gateway accepts for each service, in bytes. Storage's is replaced by
 * the configured file size limit (plus multipart framing) so config.toml stays the one setting.
 */
export const BODY_LIMITS: Record<Upstream, number> = {
  rest: 10 * 1024 * 1024,
  auth: 1024 * 1024,
  storage: 50 * 1024 * 1024,
  // Above the workflow execute endpoint's own 32 MiB cap (an inline file may be 20 MB, 27 MB as
  // base64), so that endpoint answers bodies between the two in its own {error, code} shape.
  functions: 64 * 1024 * 1024,
  // postgres-meta's own default body limit (PG_META_MAX_BODY_LIMIT_MB).
  meta: 3 * 1024 * 1024,
};

const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
  "access-control-allow-headers":
    "authorization, x-client-info, apikey, content-type, content-profile, accept-profile, prefer, range, x-upsert, x-retry-count, x-supabase-api-version, x-execution-mode, x-execution-timeout-seconds, idempotency-key, x-api-key, x-service-secret, cache-control, traceparent, tracestate, baggage",
  "access-control-expose-headers":
    "content-range, range, content-location, preference-applied, location, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, sb-request-id, x-request-id",
  "access-control-max-age": "86400",
};

/**
 * Headers that describe one hop and must not be forwarded. `expect` too: the gateway has read the
 * whole body before it calls upstream, so there is nothing left to continue.
 */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length", "expect"]);

/** Where the gateway sends requests: in-process services or proxied local ports. */
export interface GatewayTargets {
  auth: FetchHandler;
  storage: FetchHandler;
  /** Base URL of PostgREST, e.g. http://127.0.0.1:54330. */
  restUrl: string;
  /** Base URL of the edge-functions host. */
  functionsUrl: string;
  /** Base URL of postgres-meta (the /pg/ route). */
  pgMetaUrl: string;
}

interface Route {
  upstream: Upstream;
  /** Path the upstream sees (prefix stripped). */
  path: string;
  /** Whether Kong rewrites Authorization on this route. */
  translateKeys: boolean;
}

/** `<identifier>.chat.<domain>`: a chat deployment's subdomain form (locally `<identifier>.chat.localhost`). */
const CHAT_SUBDOMAIN = /^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)\.chat\./;

function route(pathname: string, hostname: string): Route | null {
  // Chat deployments are the `chat` function's, at /chat/<identifier> or on their own subdomain.
  const chat = CHAT_SUBDOMAIN.exec(hostname);
  if (chat) return { upstream: "functions", path: `/chat/${chat[1]}${pathname === "/" ? "" : pathname}`, translateKeys: false };
  if (pathname === "/chat" || pathname.startsWith("/chat/")) return { upstream: "functions", path: pathname, translateKeys: false };
  const prefixes: [string, Upstream][] = [["/rest/v1", "rest"], ["/auth/v1", "auth"], ["/storage/v1", "storage"], ["/functions/v1", "functions"], ["/pg", "meta"]];
  for (const [prefix, upstream] of prefixes) {
    if (pathname === prefix || pathname.startsWith(`${prefix}/`)) {
      const path = pathname.slice(prefix.length) || "/";
      // GoTrue's browser redirects carry no API key, and Kong forwards them untouched.
      const translateKeys = !(upstream === "auth" && /^\/(verify|callback|authorize)\b/.test(path));
      return { upstream, path, translateKeys };
    }
  }
  // The specs' root paths (/api/...) are the `api` edge function's, as on a custom domain.
  if (pathname === "/api" || pathname.startsWith("/api/")) return { upstream: "functions", path: pathname, translateKeys: true };
  return null;
}

/**
 * Reads a request body up to `limit` bytes: undefined for GET and HEAD (whose bodies upstreams
 * ignore), null when it is larger than the limit.
 */
async function readBody(incoming: IncomingMessage, limit: number): Promise<Buffer | null | undefined> {
  if (incoming.method === "GET" || incoming.method === "HEAD") return undefined;
  if (Number(incoming.headers["content-length"] ?? "0") > limit) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/** Claims of a valid bearer token, or null for a missing, malformed, forged or expired one. */
function bearerClaims(authorization: string | null, cache: ClaimsCache): VerifiedClaims | null {
  if (!authorization?.startsWith("Bearer ")) return null;
  return cache.claimsOf(authorization.slice("Bearer ".length));
}

/** How the gateway counts and caps requests. */
export interface GatewayOptions {
  limiter?: RateLimiter;
  bodyLimits?: Record<Upstream, number>;
  /** Peers whose X-Forwarded-For names the client (none by default: the TCP peer is the client). */
  trustedProxies?: TrustedProxies;
  /** Keys bearer tokens are checked with (default: the stack's secret and signing keys). */
  keys?: VerificationKeys;
}

/** A node request handler, as `http.createServer` takes. */
export type GatewayListener = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

/**
 * The local API gateway: what Kong does for `supabase start` on port 54321. Routes by prefix,
 * translates API keys into JWTs, answers CORS, tags requests with an id, caps body sizes and
 * enforces the per-minute rate limits of decisions.md (data API 200, auth 60, functions 500).
 * Upstreams get the client's address as the only X-Forwarded-For entry. It works on node's own
 * request and response objects: the data API and functions are proxied stream to stream, and only
 * the in-process services (auth, storage) get web Requests.
 */
export function createGateway(
  config: StackConfig,
  targets: GatewayTargets,
  { limiter = new RateLimiter(), bodyLimits = BODY_LIMITS, trustedProxies = new TrustedProxies(), keys = stackKeys(config) }: GatewayOptions = {},
): GatewayListener {
  const claimsCache = new ClaimsCache(keys);
  const restOrigin = new URL(targets.restUrl);
  const functionsOrigin = new URL(targets.functionsUrl);
  const pgMetaOrigin = new URL(targets.pgMetaUrl);
  const handle = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const method = incoming.method ?? "GET";
    const requestHeaders = incomingHeaderReader(incoming.headers);
    const clientAddress = clientAddressOf(requestHeaders, incoming.socket.remoteAddress ?? "unknown", trustedProxies);
    const requestId = requestHeaders.get("x-request-id") ?? randomUUID();
    const tags = { ...CORS_HEADERS, "sb-request-id": requestId, "x-request-id": requestId };
    const url = new URL(incoming.url ?? "/", "http://gateway");
    // The Host header's name without its port: a chat's subdomain form routes on it.
    const hostname = (requestHeaders.get("host") ?? "").toLowerCase().replace(/:\d+$/, "");
    const target = route(url.pathname, hostname);
    if (!target) {
      sendWebResponse(outgoing, Response.json({ message: "no Route matched with those values" }, { status: 404 }), tags);
      return;
    }
    // Edge functions answer their own preflights on Supabase; Kong answers the other services'.
    if (method === "OPTIONS" && target.upstream !== "functions") {
      outgoing.writeHead(200, tags).end();
      return;
    }

    const authorization = target.translateKeys ? translateAuthorization(requestHeaders, config) : requestHeaders.get("authorization");
    const claims = target.upstream === "storage" ? null : bearerClaims(authorization, claimsCache);
    // pg-meta reads and changes the whole database as `postgres`: as Kong's key-auth and acl
    // plugins do for `supabase start`, only the service_role key (Studio's) gets through.
    if (target.upstream === "meta" && claims?.role !== "service_role") {
      const refusal = authorization === null
        ? upstreamError("meta", 401, "no_api_key", "No API key found in request")
        : upstreamError("meta", 403, "forbidden", "You cannot consume this service");
      sendWebResponse(outgoing, refusal, tags);
      return;
    }
    // The service_role key is a server secret held by trusted back-office code (functions, workers),
    // not a client; its calls all come from this machine and would otherwise share one budget.
    if (target.upstream !== "storage" && claims?.role !== "service_role") {
      const caller = typeof claims?.sub === "string" ? `sub:${claims.sub}` : `ip:${clientAddress}`;
      const decision = limiter.hit(target.upstream as LimitedRoute, caller);
      if (!decision.allowed) {
        const code = target.upstream === "auth" ? "over_request_rate_limit" : "rate_limit_exceeded";
        const message = target.upstream === "auth" ? "Request rate limit reached" : `Rate limit exceeded: ${decision.limit} requests per minute`;
        sendWebResponse(outgoing, upstreamError(target.upstream, 429, code, message, { "retry-after": String(decision.resetSeconds) }), tags);
        return;
      }
    }

    const unfiltered = target.upstream === "rest" ? unfilteredWriteError(method, target.path, url.searchParams) : null;
    if (unfiltered) {
      sendWebResponse(outgoing, unfiltered, tags);
      return;
    }

    const body = await readBody(incoming, bodyLimits[target.upstream]);
    if (body === null) {
      const limitMiB = Math.round(bodyLimits[target.upstream] / (1024 * 1024));
      // The rest of the body is never read: the connection cannot serve another request.
      sendWebResponse(outgoing, upstreamError(target.upstream, 413, "payload_too_large", `Request body exceeds the ${limitMiB} MiB limit`, { connection: "close" }), tags);
      return;
    }

    const headers: Record<string, string> = {};
    for (const name in incoming.headers) {
      if (!HOP_BY_HOP.has(name)) headers[name] = requestHeaders.get(name) as string;
    }
    if (authorization === null) delete headers.authorization;
    else headers.authorization = authorization;
    // Loopback hops gain nothing from compression, and an encoded answer would reach the client
    // with headers describing the upstream hop; ask every upstream for identity.
    headers["accept-encoding"] = "identity";
    headers["x-request-id"] = requestId;
    headers["x-forwarded-for"] = clientAddress;
    const host = requestHeaders.get("host");
    if (host !== null) headers["x-forwarded-host"] = host;
    headers["x-forwarded-proto"] = "http";
    const upstreamUrl = `${target.path}${url.search}`;

    if (target.upstream === "rest" || target.upstream === "functions" || target.upstream === "meta") {
      const origin = { rest: restOrigin, functions: functionsOrigin, meta: pgMetaOrigin }[target.upstream];
      try {
        await proxyToUpstream({ origin, path: upstreamUrl, wholeAnswers: target.upstream === "rest" }, method, headers, body, outgoing, tags);
      } catch {
        sendWebResponse(outgoing, upstreamError(target.upstream, 502, "upstream_unavailable", `The ${target.upstream} service is not reachable`), tags);
      }
      return;
    }
    const service = target.upstream === "auth" ? targets.auth : targets.storage;
    const request = new Request(`http://${target.upstream}${upstreamUrl}`, { method, headers, body: body && new Uint8Array(body), redirect: "manual" });
    sendWebResponse(outgoing, await service(request), tags);
  };
  return (incoming, outgoing) => {
    handle(incoming, outgoing).catch(() => {
      // Only a service that threw (or a client gone mid-body) lands here; answer if still possible.
      if (outgoing.headersSent) outgoing.destroy();
      else sendWebResponse(outgoing, Response.json({ message: "An invalid response was received from the upstream server" }, { status: 502 }), {});
    });
  };
}
