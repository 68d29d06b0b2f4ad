import type { IncomingMessage, ServerResponse } from "node:http";
import { stackKeys } from "../auth/signing-keys.ts";
import type { StackConfig } from "../config.ts";
import type { FetchHandler } from "../http.ts";
import { verifyJwt, type VerificationKeys } from "../jwt.ts";
import { VERIFIER_PATH } from "./front.ts";
import { sendWebResponse } from "./node-response.ts";

/** The in-process services the node half of the gateway serves. */
export interface GatewayTargets {
  auth: FetchHandler;
  storage: FetchHandler;
}

/** A node request handler, as `http.createServer` takes. */
export type GatewayListener = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

/** Headers that describe one hop and are not handed to a service. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length", "expect", "x-orbita-service"]);

/** A request body read whole: undefined for GET and HEAD, whose bodies services ignore. */
async function readBody(incoming: IncomingMessage): Promise<Buffer | undefined> {
  if (incoming.method === "GET" || incoming.method === "HEAD") return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of incoming as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
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

/**
 * The node half of the local API gateway (what Kong does for `supabase start` on port 54321): it
 * serves auth and storage in-process and verifies bearer tokens for the public half, HAProxy with
 * platform/gateway/front.lua, which listens on the gateway port, carries every duty (routing, key
 * translation, CORS, request ids, caps, rate limits) and sends auth and storage requests here on
 * the internal port with their prefix stripped and the service named in X-Orbita-Service.
 */
export function createGateway(config: StackConfig, targets: GatewayTargets, keys: VerificationKeys = stackKeys(config)): GatewayListener {
  const handle = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const method = incoming.method ?? "GET";
    const path = incoming.url ?? "/";
    const service = incoming.headers["x-orbita-service"];
    if (service === undefined && path === VERIFIER_PATH) {
      sendWebResponse(outgoing, verifierAnswer(incoming.headers.authorization, keys), {});
      return;
    }
    // Only the public half sends requests here; it answers unknown routes itself.
    if (service !== "auth" && service !== "storage") {
      outgoing.writeHead(404).end();
      return;
    }
    const headers = new Headers();
    for (const name in incoming.headers) {
      if (HOP_BY_HOP.has(name)) continue;
      const value = incoming.headers[name];
      headers.set(name, Array.isArray(value) ? value.join(", ") : (value ?? ""));
    }
    const body = await readBody(incoming);
    const request = new Request(`http://${service}${path}`, { method, headers, body: body && new Uint8Array(body), redirect: "manual" });
    sendWebResponse(outgoing, await targets[service](request), {});
  };
  return (incoming, outgoing) => {
    handle(incoming, outgoing).catch(() => {
      // Only a service that threw (or a client gone mid-body) lands here; answer if still possible.
      if (outgoing.headersSent) outgoing.destroy();
      else sendWebResponse(outgoing, Response.json({ message: "An invalid response was received from the upstream server" }, { status: 502 }), {});
    });
  };
}
