/**
 * The gateway's hop to PostgREST and the functions host: undici's dispatcher on kept-alive
 * upstream connections, and the upstream's answer written to the client as it arrives. No web
 * Request, Response or stream is built on this path. Profiling the gateway under load showed its
 * time in system calls and in node:http's client; undici's dispatch costs half of that client per
 * request (52 µs against 100 µs on this machine), so the hop is written against it. Functions'
 * bodies stream (SSE) with backpressure, and a client that goes away aborts the upstream request,
 * before its answer has begun (as Kong closes the upstream connection) or while it streams.
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { Pool, type Dispatcher } from "undici";
import { clientHeaders } from "./node-response.ts";

/** Statuses whose responses never have a body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** Largest answer gathered into one write; a longer one streams as it arrives. */
const WHOLE_ANSWER_BYTES = 256 * 1024;

/** Kept-alive connections per upstream, as many as node's agent allowed before. */
const CONNECTIONS_PER_UPSTREAM = 256;

const pools = new Map<string, Pool>();

/**
 * The connection pool for an origin. Timeouts are off: an edge function may stream for as long
 * as its wall clock allows (the functions host enforces it), and PostgREST's statement timeout
 * bounds the data API.
 */
function poolFor(origin: URL): Pool {
  let pool = pools.get(origin.origin);
  if (!pool) {
    pool = new Pool(origin.origin, { connections: CONNECTIONS_PER_UPSTREAM, headersTimeout: 0, bodyTimeout: 0 });
    pools.set(origin.origin, pool);
  }
  return pool;
}

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
  headers: Record<string, string>,
  body: Buffer | undefined,
  outgoing: ServerResponse,
  extra: Record<string, string>,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let answered = false;
    let status = 502;
    let statusMessage: string | undefined;
    let answerHeaders: OutgoingHttpHeaders = {};
    // A gathered answer's chunks while it is short enough to send in one write; null once streaming.
    let gathered: Buffer[] | null = null;
    let gatheredBytes = 0;
    let upstream: Dispatcher.DispatchController | null = null;
    outgoing.on("close", () => {
      if (!outgoing.writableFinished) upstream?.abort(new Error("the client went away"));
    });

    const startStreaming = (controller: Dispatcher.DispatchController) => {
      outgoing.writeHead(status, statusMessage, answerHeaders);
      for (const part of gathered ?? []) outgoing.write(part);
      gathered = null;
      outgoing.on("drain", () => controller.resume());
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        upstream = controller;
        // A client gone before the upstream was reached: nothing to wait for.
        if (outgoing.destroyed) controller.abort(new Error("the client went away"));
      },
      onResponseStart(controller, statusCode, responseHeaders, message) {
        if (statusCode < 200) return;
        answered = true;
        resolve();
        status = statusCode;
        statusMessage = message || undefined;
        answerHeaders = clientHeaders(responseHeaders, extra);
        if (NULL_BODY.has(status) || method === "HEAD") return;
        if (target.wholeAnswers) {
          gathered = [];
          return;
        }
        startStreaming(controller);
        // An event stream's headers go out at once: the first event may come much later.
        if (String(responseHeaders["content-type"] ?? "").startsWith("text/event-stream")) outgoing.flushHeaders();
      },
      onResponseData(controller, chunk) {
        if (gathered !== null) {
          gathered.push(chunk);
          gatheredBytes += chunk.byteLength;
          if (gatheredBytes > WHOLE_ANSWER_BYTES) startStreaming(controller);
          return;
        }
        if (!outgoing.write(chunk)) controller.pause();
      },
      onResponseEnd() {
        if (outgoing.headersSent) {
          outgoing.end();
          return;
        }
        if (gathered === null) {
          // A body-less answer (204, 304, HEAD) keeps the upstream's own headers as they are.
          outgoing.writeHead(status, statusMessage, answerHeaders).end();
          return;
        }
        answerHeaders["content-length"] = String(gatheredBytes);
        outgoing.writeHead(status, statusMessage, answerHeaders);
        outgoing.end(gathered.length === 1 ? gathered[0] : Buffer.concat(gathered, gatheredBytes));
      },
      onResponseError(_controller, error) {
        if (!answered) reject(error);
        else outgoing.destroy();
      },
    };

    try {
      poolFor(target.origin).dispatch({ path: target.path, method: method as Dispatcher.HttpMethod, headers, body: body ?? null }, handler);
    } catch (error) {
      // Arguments undici refuses (a header value it will not send) fail before anything is sent.
      reject(error);
    }
  });
}
