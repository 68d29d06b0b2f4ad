/**
 * The gateway's hop to PostgREST and the functions host: node:http both ways, kept-alive upstream
 * connections, and the upstream's answer piped to the client as it arrives. No web Request,
 * Response or stream is built on this path: converting between node and web streams cost the
 * gateway more CPU per request than PostgREST spends answering a single-row read. Functions'
 * bodies stream (SSE), and a client that goes away closes the upstream request, before its answer has begun
 * (as Kong closes the upstream connection) or while it streams.
 */
import { Agent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import { clientHeaders } from "./node-response.ts";

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** Statuses whose responses never have a body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** Largest answer gathered into one write; a longer one streams as it arrives. */
const WHOLE_ANSWER_BYTES = 256 * 1024;

/** Where to send a request: the upstream's origin (`http://127.0.0.1:port`) and the path with its query. */
export interface UpstreamTarget {
  origin: URL;
  path: string;
  /**
   * Whether the upstream's answers are whole documents (PostgREST's are): the gateway then gathers
   * a short answer and sends it with a Content-Length in one write, instead of re-chunking it as
   * it arrives. Each write is a system call, and system calls are most of the gateway's cost.
   */
  wholeAnswers: boolean;
}

/**
 * Sends `method` to `target` with `headers` and `body` (already read whole) and passes the answer
 * to `outgoing` with `extra` headers added. Resolves once the upstream has answered; rejects when
 * it could not be reached, with nothing written yet, so the caller can answer 502.
 */
export function proxyToUpstream(
  target: UpstreamTarget,
  method: string,
  headers: OutgoingHttpHeaders,
  body: Buffer | undefined,
  outgoing: ServerResponse,
  extra: Record<string, string>,
): Promise<void> {
  if (body !== undefined) headers["content-length"] = String(body.byteLength);
  const { hostname, port } = target.origin;
  return new Promise((resolve, reject) => {
    const upstream = httpRequest({ hostname, port, path: target.path, method, headers, agent }, (response) => {
      resolve();
      response.on("error", () => outgoing.destroy());
      const status = response.statusCode ?? 502;
      const answerHeaders = clientHeaders(response.headers, extra);
      if (NULL_BODY.has(status) || method === "HEAD") {
        response.resume();
        outgoing.writeHead(status, response.statusMessage, answerHeaders).end();
      } else if (target.wholeAnswers) {
        sendGathered(response, status, answerHeaders, outgoing);
      } else {
        outgoing.writeHead(status, response.statusMessage, answerHeaders);
        // An event stream's headers go out at once: the first event may come much later.
        if (String(response.headers["content-type"] ?? "").startsWith("text/event-stream")) outgoing.flushHeaders();
        response.pipe(outgoing);
      }
    });
    outgoing.on("close", () => {
      if (!outgoing.writableFinished) upstream.destroy();
    });
    upstream.on("error", (error) => {
      if (outgoing.headersSent) outgoing.destroy();
      else reject(error);
    });
    upstream.end(body);
  });
}

/**
 * Gathers an answer of up to WHOLE_ANSWER_BYTES and sends it in one write with its length; past
 * that, sends what it has and streams the rest.
 */
function sendGathered(response: IncomingMessage, status: number, headers: OutgoingHttpHeaders, outgoing: ServerResponse): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const gather = (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size <= WHOLE_ANSWER_BYTES) return;
    response.off("data", gather).off("end", finish);
    outgoing.writeHead(status, response.statusMessage, headers);
    for (const part of chunks) outgoing.write(part);
    response.pipe(outgoing);
  };
  const finish = () => {
    headers["content-length"] = String(size);
    outgoing.writeHead(status, response.statusMessage, headers);
    outgoing.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
  };
  response.on("data", gather).on("end", finish);
}
