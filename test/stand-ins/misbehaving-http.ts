/**
 * An HTTP target that misbehaves on purpose, for the outbound guard and the API block: it echoes
 * requests, answers any status (with `Retry-After`), fails a counted number of times before
 * succeeding, hangs before or in the middle of its answer, resets connections, redirects anywhere,
 * sends huge, compressed or malformed bodies. Routes (query parameters in brackets):
 *
 * | route | answer |
 * |---|---|
 * | `/echo` | 200 JSON `{method, path, query, headers, body}` |
 * | `/json`, `/text`, `/empty` | a JSON object, plain text, 204 |
 * | `/orders/<id>` | a well-behaved order API: 200 `{id, status, items}` for a numeric id, else 404 |
 * | `/status/<code>` [`retryAfter`] | that status with `{status}` |
 * | `/flaky/<key>` [`fail`=n, `status`, `retryAfter`, `mode`=status\|reset\|hang] | fails the first n calls of `key`, then 200 `{attempts}` |
 * | `/hang` | never answers |
 * | `/stall` | headers and half a body, then nothing |
 * | `/reset` | closes the connection without answering |
 * | `/redirect` [`to`, `status`] | a redirect to `to` |
 * | `/huge` [`bytes`, `chunked`] | that many bytes of `x` |
 * | `/gzip` | a gzip-compressed JSON body |
 * | `/malformed` | bytes that are not HTTP |
 *
 * `attempts(key)` tells how often `/flaky/<key>` was called, `requests` lists every request.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";

/** One request as the target saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A running misbehaving target. */
export interface MisbehavingServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: SeenRequest[];
  attempts(key: string): number;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

/** Starts the target on `port` (0: any free port) of 127.0.0.1. */
export async function startMisbehavingServer(port = 0): Promise<MisbehavingServer> {
  const counts = new Map<string, number>();
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://stand-in");
    const body = await readBody(request);
    requests.push({ method: request.method ?? "", path: url.pathname + url.search, headers: request.headers, body });
    const query = Object.fromEntries(url.searchParams);
    const [, route, arg] = url.pathname.split("/");
    switch (route) {
      case "echo":
        return json(response, 200, { method: request.method, path: url.pathname, query, headers: request.headers, body });
      case "json":
        return json(response, 200, { ok: true, items: [1, 2, 3] });
      case "text":
        response.writeHead(200, { "content-type": "text/plain" }).end("plain words");
        return;
      case "orders":
        return /^\d+$/.test(arg ?? "") ? json(response, 200, { id: Number(arg), status: "shipped", items: 2 }) : json(response, 404, { error: "order not found" });
      case "empty":
        response.writeHead(204).end();
        return;
      case "status": {
        const status = Number(arg);
        return json(response, status, { status }, query.retryAfter ? { "retry-after": query.retryAfter } : {});
      }
      case "flaky": {
        const attempt = (counts.get(arg) ?? 0) + 1;
        counts.set(arg, attempt);
        if (attempt <= Number(query.fail ?? 0)) {
          if (query.mode === "reset") return void request.socket.destroy();
          if (query.mode === "hang") return;
          return json(response, Number(query.status ?? 503), { attempt }, query.retryAfter ? { "retry-after": query.retryAfter } : {});
        }
        return json(response, 200, { attempts: attempt });
      }
      case "hang":
        return;
      case "stall":
        response.writeHead(200, { "content-type": "text/plain", "content-length": "100" });
        response.write("x".repeat(50));
        return;
      case "reset":
        return void request.socket.destroy();
      case "redirect":
        response.writeHead(Number(query.status ?? 302), { location: query.to ?? "/json" }).end();
        return;
      case "huge": {
        const bytes = Number(query.bytes ?? 1_000_000);
        const block = Buffer.alloc(64 * 1024, "x");
        response.writeHead(200, query.chunked ? { "content-type": "text/plain" } : { "content-type": "text/plain", "content-length": String(bytes) });
        let sent = 0;
        const more = () => {
          while (sent < bytes) {
            const piece = block.subarray(0, Math.min(block.length, bytes - sent));
            sent += piece.length;
            if (!response.write(piece)) return void response.once("drain", more);
          }
          response.end();
        };
        response.on("close", () => (sent = bytes));
        more();
        return;
      }
      case "gzip":
        response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" }).end(gzipSync(JSON.stringify({ compressed: true })));
        return;
      case "malformed":
        request.socket.end("SMTP READY\r\n\r\n");
        return;
      default:
        return json(response, 404, { error: "no such route" });
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    requests,
    attempts: (key) => counts.get(key) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
