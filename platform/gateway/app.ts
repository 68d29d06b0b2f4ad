import type { IncomingMessage, ServerResponse } from "node:http";
import { stackKeys } from "../keys/signing-keys.ts";
import type { StackConfig } from "../config/stack-config.ts";
import type { FetchHandler } from "../http/platform-service.ts";
import { verifyJwt, type VerificationKeys } from "../keys/verify-jwt.ts";
import { tooLargeAnswer, upstreamError, type GatewayAnswer } from "./error-shapes.ts";
import { bodyLimits, VERIFIER_PATH } from "./front.ts";
import { carriesGatewayCredential, GATEWAY_CREDENTIAL_HEADER } from "./internal-credential.ts";
import { sendWebResponse } from "./node-response.ts";

/**
 * The services the node half of the gateway serves: auth and storage in-process, and the data API
 * for bodies of unknown length, which it counts against their cap on their way to PostgREST.
 */
export interface GatewayTargets {
  auth: FetchHandler;
  storage: FetchHandler;
  rest: FetchHandler;
}

/** A node request handler, as `http.createServer` takes. */
export type GatewayListener = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

/** Headers that describe one hop and are not handed to a service. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length", "expect", "x-orbita-service", GATEWAY_CREDENTIAL_HEADER]);

/**
 * A request body read whole, or "too large" when it passed `limit` bytes; undefined for GET and
 * HEAD, whose bodies services ignore. A body of unknown length is counted as it arrives: past the
 * limit the rest is read and dropped, never buffered, as front.lua's 413 service drops a declared
 * one (a connection closed mid-body left HAProxy's next request on it waiting for its timeouts).
 */
async function readBody(incoming: IncomingMessage, limit: number): Promise<Buffer | undefined | "too large"> {
  if (incoming.method === "GET" || incoming.method === "HEAD") return undefined;
  let chunks: Buffer[] | undefined = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) chunks = undefined;
    else chunks?.push(chunk);
  }
  return chunks ? Buffer.concat(chunks) : "too large";
}

/** Sends one of the gateway's own answers, closing the connection after it when the answer says so. */
function sendAnswer(outgoing: ServerResponse, answer: GatewayAnswer): void {
  if (answer.headers.connection === "close") outgoing.shouldKeepAlive = false;
  sendWebResponse(outgoing, new Response(answer.body, { status: answer.status, headers: answer.headers }), {});
}

/** The data API's target: PostgREST at `origin`, sent a counted body with its length. */
export function postgrestTarget(origin: string): FetchHandler {
  return async (request) => {
    const url = new URL(request.url);
    const body = request.body ? await request.arrayBuffer() : undefined;
    return fetch(`${origin}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body, redirect: "manual" });
  };
}

/**
 * The bearer token's claims as front.lua reads them, one per line (role, sub, exp; empty when
 * absent), or 401 for a malformed, forged or expired token. This is the gateway's one verifier:
 * HS256 and the stack's asymmetric signing keys.
 */
function verifierAnswer(authorization: string | undefined, keys: VerificationKeys): Response {
  if (!authorization?.startsWith("Bearer ")) return new Response(null, { status: 401 });
  try {
    const claims = verifyJwt(authorization.slice("Bearer ".length), keys);
    const line = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value).replace(/\n/g, " ") : "");
    return new Response(`${line(claims.role)}\n${line(claims.sub)}\n${line(claims.exp)}`, { status: 200, headers: { "content-type": "text/plain" } });
  } catch {
    return new Response(null, { status: 401 });
  }
}

/** The 401 for a request without the gateway's credential, in the shape of the service it named (a bare one otherwise). */
function credentialRefusal(service: string | string[] | undefined): GatewayAnswer {
  const message = "Only the API gateway may call this port; send the request to the gateway";
  if (service === "auth" || service === "storage" || service === "rest") return upstreamError(service, 401, "no_gateway_credential", message);
  return { status: 401, headers: { "content-type": "application/json" }, body: JSON.stringify({ message }) };
}

/**
 * The node half of the local API gateway (what Kong does for `supabase start` on port 54321): it
 * serves auth and storage in-process and verifies bearer tokens for the public half, HAProxy with
 * platform/gateway/front.lua, which listens on the gateway port, carries every duty (routing, key
 * translation, CORS, request ids, caps, rate limits) and sends auth and storage requests here on
 * the internal port with their prefix stripped and the service named in X-Orbita-Service, as it
 * does a data-API request whose body has no Content-Length. Every request must carry the gateway's
 * `credential` (internal-credential.ts), token verifications included.
 */
export function createGateway(config: StackConfig, targets: GatewayTargets, credential: string, keys: VerificationKeys = stackKeys(config)): GatewayListener {
  const limits = bodyLimits();
  const handle = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const method = incoming.method ?? "GET";
    const path = incoming.url ?? "/";
    const service = incoming.headers["x-orbita-service"];
    // Anything on the machine can open this port; only the public half holds the credential, so
    // only its requests (which passed its key checks and rate limits) are served.
    if (!carriesGatewayCredential(incoming.headers[GATEWAY_CREDENTIAL_HEADER], credential)) {
      sendAnswer(outgoing, credentialRefusal(service));
      return;
    }
    if (service === undefined && path === VERIFIER_PATH) {
      sendWebResponse(outgoing, verifierAnswer(incoming.headers.authorization, keys), {});
      return;
    }
    // Only the public half sends requests here; it answers unknown routes itself.
    if (typeof service !== "string" || !Object.hasOwn(targets, service)) {
      outgoing.writeHead(404).end();
      return;
    }
    const target = service as keyof GatewayTargets;
    const headers = new Headers();
    for (const name in incoming.headers) {
      if (HOP_BY_HOP.has(name)) continue;
      const value = incoming.headers[name];
      headers.set(name, Array.isArray(value) ? value.join(", ") : (value ?? ""));
    }
    const body = await readBody(incoming, limits[target]);
    if (body === "too large") {
      sendAnswer(outgoing, tooLargeAnswer(target, limits[target]));
      return;
    }
    const request = new Request(`http://${target}${path}`, { method, headers, body: body && new Uint8Array(body), redirect: "manual" });
    sendWebResponse(outgoing, await targets[target](request), {});
  };
  return (incoming, outgoing) => {
    handle(incoming, outgoing).catch(() => {
      // Only a service that threw (or a client gone mid-body) lands here; answer if still possible.
      if (outgoing.headersSent) outgoing.destroy();
      else sendWebResponse(outgoing, Response.json({ message: "An invalid response was received from the upstream server" }, { status: 502 }), {});
    });
  };
}
