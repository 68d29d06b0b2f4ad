/**
 * A Server-Sent Events writer over a ReadableStream: `send(obj)` writes `data: <json>\n\n`,
 * `sendRaw("[DONE]")` a raw data line, heartbeat comments keep proxies from closing a quiet
 * stream, and the writer's `signal` aborts when the client goes away (the stream is cancelled or
 * the request's own signal aborts), so the work behind the stream can stop.
 */

/** Writes events to one SSE response. Writes after close are ignored. */
export interface SseWriter {
  /** One event whose data is `value` as JSON. */
  send(value: unknown, event?: string): void;
  /** One event whose data is `data` as is (multi-line text becomes several data lines). */
  sendRaw(data: string, event?: string): void;
  /** A comment line (`: text`), which clients ignore. */
  comment(text: string): void;
  /** Ends the stream. */
  close(): void;
  /** Whether the stream has ended, by `close` or because the client left. */
  readonly closed: boolean;
  /** Aborts when the client disconnects (not on `close`). */
  readonly signal: AbortSignal;
}

/** Options of `createSse`. */
export interface SseOptions {
  /** Milliseconds between heartbeat comments; 0 turns them off. Default 15 s. */
  heartbeatMs?: number;
  /** The request's signal: its abort means the client left. */
  signal?: AbortSignal;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

/** Headers every SSE response carries: no caching, no proxy buffering. */
const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

/** The frame of one event. */
function frame(data: string, event?: string): string {
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}`);
  return `${event ? `event: ${event.replace(/[\r\n]/g, " ")}\n` : ""}${lines.join("\n")}\n\n`;
}

/** A streaming response and the writer that feeds it. */
export function createSse(options: SseOptions = {}): { response: Response; writer: SseWriter } {
  const { heartbeatMs = 15_000, signal, headers = {} } = options;
  const encoder = new TextEncoder();
  const disconnect = new AbortController();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;

  const stop = () => {
    closed = true;
    if (heartbeat !== undefined) clearInterval(heartbeat);
    signal?.removeEventListener("abort", onClientAbort);
  };
  const onClientAbort = () => {
    if (closed) return;
    stop();
    disconnect.abort(signal?.reason ?? new Error("the client disconnected"));
    try {
      controller.close();
    } catch {
      // Already closed or errored by the runtime.
    }
  };
  const write = (text: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      onClientAbort();
    }
  };

  const stream = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
    },
    cancel() {
      onClientAbort();
    },
  });
  if (signal?.aborted) onClientAbort();
  else signal?.addEventListener("abort", onClientAbort, { once: true });
  if (heartbeatMs > 0 && !closed) heartbeat = setInterval(() => write(": heartbeat\n\n"), heartbeatMs);

  const writer: SseWriter = {
    send: (value, event) => write(frame(JSON.stringify(value) ?? "null", event)),
    sendRaw: (data, event) => write(frame(data, event)),
    comment: (text) => write(`${text.split(/\r\n|\r|\n/).map((line) => `: ${line}`).join("\n")}\n\n`),
    close: () => {
      if (closed) return;
      stop();
      controller.close();
    },
    get closed() {
      return closed;
    },
    signal: disconnect.signal,
  };
  return { response: new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...headers } }), writer };
}
