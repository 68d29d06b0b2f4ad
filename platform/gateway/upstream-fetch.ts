/**
 * The gateway's hop to PostgREST and the functions host: a fetch-shaped call over node:http with
 * kept-alive connections. Node's global fetch (undici) costs about three times the CPU per request,
 * and the gateway pays it on every data-API and function call; bodies still stream (SSE), and a
 * client that goes away cancels the upstream request, before its answer has begun (as Kong closes
 * the upstream connection) or while it streams.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** Statuses whose responses never have a body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

function responseHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

/**
 * Sends `method url` with `headers` and `body` (already read whole) and resolves with the upstream's
 * response; `signal` (the client's request) aborting closes the upstream connection.
 */
export function upstreamFetch(url: string, method: string, headers: Headers, body: Uint8Array | undefined, signal?: AbortSignal): Promise<Response> {
  const outgoing: Record<string, string> = Object.fromEntries(headers);
  if (body !== undefined) outgoing["content-length"] = String(body.byteLength);
  return new Promise((resolve, reject) => {
    const upstream = httpRequest(url, { method, headers: outgoing, agent, signal }, (response) => {
      const status = response.statusCode ?? 502;
      const empty = NULL_BODY.has(status) || method === "HEAD";
      if (empty) response.resume();
      resolve(new Response(empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>), {
        status,
        statusText: response.statusMessage,
        headers: responseHeaders(response.headers),
      }));
    });
    upstream.on("error", reject);
    upstream.end(body);
  });
}
