/** The service behind a gateway route; each answers errors in its own platform shape. */
export type Upstream = "rest" | "auth" | "storage" | "functions" | "meta";

/** An answer the gateway gives itself, without asking a service. */
export interface GatewayAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A JSON error in the shape clients of that service (postgrest-js, auth-js, storage-js, functions-js, Studio for pg-meta) read. */
export function upstreamError(upstream: Upstream, status: number, code: string, message: string, headers: Record<string, string> = {}): GatewayAnswer {
  const bodies: Record<Upstream, unknown> = {
    rest: { code, message, details: null, hint: null },
    auth: { code, message },
    storage: { statusCode: String(status), error: code, message },
    functions: { code, message },
    // Kong's own refusals on the pg-meta route are {message}.
    meta: { message },
  };
  return {
    status,
    headers: { "content-type": "application/json", ...(upstream === "auth" ? { "x-sb-error-code": code } : {}), ...headers },
    body: JSON.stringify(bodies[upstream]),
  };
}

/**
 * The 413 for a request body over `limit` bytes, in the service's shape. The body is read and
 * dropped before it is sent (a client still sending would otherwise see a broken pipe, not the
 * answer), and the connection is closed after it.
 */
export function tooLargeAnswer(upstream: Upstream, limit: number): GatewayAnswer {
  return upstreamError(upstream, 413, "payload_too_large", `Request body exceeds the ${Math.round(limit / (1024 * 1024))} MiB limit`, { connection: "close" });
}
