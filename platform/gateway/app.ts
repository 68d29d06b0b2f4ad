import { randomUUID } from "node:crypto";
import type { StackConfig } from "../config.ts";
import type { FetchHandler } from "../http.ts";
import { verifyJwt, type VerificationKeys, type VerifiedClaims } from "../jwt.ts";
import { stackKeys } from "../auth/signing-keys.ts";
import { clientAddressOf, TrustedProxies } from "./client-address.ts";
import { upstreamError, type Upstream } from "./error-shapes.ts";
import { translateAuthorization } from "./key-translation.ts";
import { RateLimiter, type LimitedRoute } from "./rate-limit.ts";
import { unfilteredWriteError } from "./safe-update.ts";
import { upstreamFetch } from "./upstream-fetch.ts";

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
};

const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
  "access-control-allow-headers":
    "authorization, x-client-info, apikey, content-type, content-profile, accept-profile, prefer, range, x-upsert, x-retry-count, x-supabase-api-version, x-execution-mode, x-api-key, x-service-secret, cache-control, traceparent, tracestate, baggage",
  "access-control-expose-headers":
    "content-range, range, content-location, preference-applied, location, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, sb-request-id, x-request-id",
  "access-control-max-age": "86400",
};

/** Headers that describe one hop and must not be forwarded. */
const HOP_BY_HOP = ["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length"];

/** Where the gateway sends requests: in-process services or proxied local ports. */
export interface GatewayTargets {
  auth: FetchHandler;
  storage: FetchHandler;
  /** Base URL of PostgREST, e.g. http://127.0.0.1:54330. */
  restUrl: string;
  /** Base URL of the edge-functions host. */
  functionsUrl: string;
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
  const prefixes: [string, Upstream][] = [["/rest/v1", "rest"], ["/auth/v1", "auth"], ["/storage/v1", "storage"], ["/functions/v1", "functions"]];
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

/** Reads a request body up to `limit` bytes; null when it is larger. */
async function readBody(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer> | null | undefined> {
  if (request.method === "GET" || request.method === "HEAD" || !request.body) return undefined;
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** Claims of a valid bearer token, or null for a missing, malformed, forged or expired one. */
function bearerClaims(authorization: string | null, keys: VerificationKeys): VerifiedClaims | null {
  if (!authorization?.startsWith("Bearer ")) return null;
  try {
    return verifyJwt(authorization.slice("Bearer ".length), keys);
  } catch {
    return null;
  }
}

function withHeaders(response: Response, extra: Record<string, string>): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(extra)) if (!headers.has(name)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
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

/**
 * The local API gateway: what Kong does for `supabase start` on port 54321. Routes by prefix,
 * translates API keys into JWTs, answers CORS, tags requests with an id, caps body sizes and
 * enforces the per-minute rate limits of decisions.md (data API 200, auth 60, functions 500).
 * Upstreams get the client's address as the only X-Forwarded-For entry.
 */
export function createGateway(
  config: StackConfig,
  targets: GatewayTargets,
  { limiter = new RateLimiter(), bodyLimits = BODY_LIMITS, trustedProxies = new TrustedProxies(), keys = stackKeys(config) }: GatewayOptions = {},
): (request: Request, peer: string) => Promise<Response> {
  return async (request, peer) => {
    const clientAddress = clientAddressOf(request, peer, trustedProxies);
    const requestId = request.headers.get("x-request-id") ?? randomUUID();
    const tags = { ...CORS_HEADERS, "sb-request-id": requestId, "x-request-id": requestId };
    const url = new URL(request.url);
    const target = route(url.pathname, url.hostname);
    if (!target) {
      return withHeaders(Response.json({ message: "no Route matched with those values" }, { status: 404 }), tags);
    }
    // Edge functions answer their own preflights on Supabase; Kong answers the other services'.
    if (request.method === "OPTIONS" && target.upstream !== "functions") return new Response(null, { status: 200, headers: tags });

    const authorization = target.translateKeys ? translateAuthorization(request.headers, config) : request.headers.get("authorization");
    const claims = target.upstream === "storage" ? null : bearerClaims(authorization, keys);
    // The service_role key is a server secret held by trusted back-office code (functions, workers),
    // not a client; its calls all come from this machine and would otherwise share one budget.
    if (target.upstream !== "storage" && claims?.role !== "service_role") {
      const caller = typeof claims?.sub === "string" ? `sub:${claims.sub}` : `ip:${clientAddress}`;
      const decision = limiter.hit(target.upstream as LimitedRoute, caller);
      if (!decision.allowed) {
        const code = target.upstream === "auth" ? "over_request_rate_limit" : "rate_limit_exceeded";
        const message = target.upstream === "auth" ? "Request rate limit reached" : `Rate limit exceeded: ${decision.limit} requests per minute`;
        return withHeaders(upstreamError(target.upstream, 429, code, message, { "retry-after": String(decision.resetSeconds) }), tags);
      }
    }

    const unfiltered = target.upstream === "rest" ? unfilteredWriteError(request.method, target.path, url.searchParams) : null;
    if (unfiltered) return withHeaders(unfiltered, tags);

    const body = await readBody(request, bodyLimits[target.upstream]);
    if (body === null) {
      const limitMiB = Math.round(bodyLimits[target.upstream] / (1024 * 1024));
      return withHeaders(upstreamError(target.upstream, 413, "payload_too_large", `Request body exceeds the ${limitMiB} MiB limit`), tags);
    }

    const headers = new Headers(request.headers);
    for (const name of HOP_BY_HOP) headers.delete(name);
    if (authorization === null) headers.delete("authorization");
    else headers.set("authorization", authorization);
    // Loopback hops gain nothing from compression, and an encoded answer would reach the client
    // with headers describing the upstream hop; ask every upstream for identity.
    headers.set("accept-encoding", "identity");
    headers.set("x-request-id", requestId);
    headers.set("x-forwarded-for", clientAddress);
    headers.set("x-forwarded-host", url.host);
    headers.set("x-forwarded-proto", url.protocol.replace(":", ""));
    const upstreamUrl = `${target.path}${url.search}`;
    const init: RequestInit & { duplex?: "half" } = { method: request.method, headers, body, redirect: "manual" };

    let response: Response;
    try {
      switch (target.upstream) {
        case "auth":
          response = await targets.auth(new Request(`http://auth${upstreamUrl}`, init));
          break;
        case "storage":
          response = await targets.storage(new Request(`http://storage${upstreamUrl}`, init));
          break;
        case "rest":
          response = await upstreamFetch(`${targets.restUrl}${upstreamUrl}`, request.method, headers, body, request.signal);
          break;
        case "functions":
          response = await upstreamFetch(`${targets.functionsUrl}${upstreamUrl}`, request.method, headers, body, request.signal);
          break;
      }
    } catch {
      return withHeaders(upstreamError(target.upstream, 502, "upstream_unavailable", `The ${target.upstream} service is not reachable`), tags);
    }
    return withHeaders(response, tags);
  };
}
