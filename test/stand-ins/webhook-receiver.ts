/**
 * A webhook receiver for the delivery tests: a real HTTP server on loopback that records every
 * request it gets (arrival time, headers, the raw body bytes) and checks its signature byte for
 * byte the way docs/webhooks.md tells subscribers to: HMAC-SHA256 over `<timestamp>.` plus the
 * exact bytes received, compared in constant time, with the timestamp within five minutes. What
 * it answers is scripted per path: a status, a slow answer, an answer that never comes, or a reset
 * connection; and the whole receiver can go down (connection refused) and come back on its port.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What the receiver answers one request with. */
export type ReceiverAnswer =
  | number
  /** The status after a wait (none by default), with `body` instead of the usual one when given. */
  | { status: number; delayMs?: number; body?: string }
  /** No answer until the connection is closed by the sender (or the receiver stops). */
  | "hang"
  /** The connection is destroyed without an answer. */
  | "reset";

/** One request as it arrived. */
export interface Arrival {
  path: string;
  /** Date.now() when the whole body had arrived. */
  at: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The parsed body (null when it was not JSON). */
  json: Record<string, unknown> | null;
  deliveryId: string | undefined;
  /** true or false when the path has a secret (the signature checked out or not); null without one. */
  signatureValid: boolean | null;
  answered: ReceiverAnswer;
}

/** Verifies `service-signature` over the raw `body`, as a subscriber should (constant time, five-minute window). */
export function verifySignature(secret: string, headers: Record<string, string>, body: Buffer, now = Date.now()): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(headers["service-signature"] ?? "");
  if (!match || match[1] !== headers["service-timestamp"]) return false;
  if (Math.abs(now - Number(match[1])) > 5 * 60_000) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(match[2], "hex"));
}

/** The scripted receiver (see the module comment). */
export class WebhookReceiver {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly scripts = new Map<string, ReceiverAnswer[]>();
  private readonly defaults = new Map<string, ReceiverAnswer>();
  private readonly secrets = new Map<string, string>();
  private readonly log: Arrival[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(private port: number) {}

  /** A receiver listening on 127.0.0.1 (a free port unless one is given). */
  static async start(port = 0): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(port);
    await receiver.listen();
    return receiver;
  }

  /** The URL of `path` on this receiver. */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Answers the next requests to `path` with `answers`, in order, then with its default. */
  script(path: string, ...answers: ReceiverAnswer[]): this {
    this.scripts.set(path, [...(this.scripts.get(path) ?? []), ...answers]);
    return this;
  }

  /** What `path` answers once its script is used up (200 unless set). */
  answerAlways(path: string, answer: ReceiverAnswer): this {
    this.defaults.set(path, answer);
    return this;
  }

  /** The secret signatures to `path` are checked with. */
  expectSecret(path: string, secret: string): this {
    this.secrets.set(path, secret);
    return this;
  }

  /** Every request so far (to `path`, when given), in arrival order. */
  arrivals(path?: string): Arrival[] {
    return this.log.filter((arrival) => path === undefined || arrival.path === path);
  }

  /** Resolves with the arrivals to `path` once `done` holds for them; fails after `timeoutMs`. */
  async waitFor(path: string, done: (arrivals: Arrival[]) => boolean, timeoutMs = 30_000): Promise<Arrival[]> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.arrivals(path))) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for arrivals at ${path}; got ${this.arrivals(path).length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, Math.min(left, 250));
        function finish() {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(finish);
      });
    }
    return this.arrivals(path);
  }

  /** Stops listening and drops open connections: senders now get connection refused. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  async restart(): Promise<void> {
    if (!this.server) await this.listen();
  }

  private async listen(): Promise<void> {
    const server = createServer((request, response) => void this.handle(request, response));
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private nextAnswer(path: string): ReceiverAnswer {
    const script = this.scripts.get(path);
    if (script && script.length > 0) return script.shift() as ReceiverAnswer;
    return this.defaults.get(path) ?? 200;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const path = (request.url ?? "/").split("?")[0];
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value ?? ""]));
    const secret = this.secrets.get(path);
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
    } catch {
      json = null;
    }
    const answered = this.nextAnswer(path);
    this.log.push({
      path, at: Date.now(), headers, body, json, deliveryId: headers["service-delivery-id"],
      signatureValid: secret === undefined ? null : verifySignature(secret, headers, body), answered,
    });
    for (const wake of this.waiters) wake();
    this.waiters.clear();

    if (answered === "hang") return;
    if (answered === "reset") {
      request.socket.destroy();
      return;
    }
    const { status, delayMs = 0, body: answerBody } = typeof answered === "number" ? { status: answered } : answered;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (response.destroyed) return;
    if (answerBody !== undefined) {
      response.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
      response.end(answerBody);
      return;
    }
    response.writeHead(status, status >= 300 && status < 400 ? { location: this.url("/moved") } : { "content-type": "application/json" });
    response.end(status >= 300 && status < 400 ? undefined : JSON.stringify({ received: true }));
  }
}
