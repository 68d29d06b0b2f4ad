/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * The worker's side of the host↔worker channel: it does for the function's handler what
 * `Deno.serve` would, for requests the host posts instead of sending them over HTTP. Each request
 * gets a `Request` whose signal aborts when the host gives up on it (its client went away, the
 * wall-clock limit), and its response goes back whole when the function produced it at once, or
 * head first and then chunk by chunk (SSE), never more than RESPONSE_WINDOW_BYTES ahead of what the
 * host's client has taken, so a slow client slows the function's stream instead of filling memory.
 */
import {
  RESPONSE_WINDOW_BYTES,
  transferable,
  WHOLE_RESPONSE_BODY_LIMIT,
  type ExchangeHostMessage,
  type ExchangeWorkerMessage,
  type RequestMessage,
} from "./protocol.ts";

type Post = (message: ExchangeWorkerMessage, transfer?: ArrayBuffer[]) => void;
type ErrorHandler = (error: unknown) => Response | Promise<Response>;

/** Statuses whose response has no body, whatever the function put in it (as Deno.serve sends them). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A request the worker is serving. */
interface Served {
  readonly controller: AbortController;
  aborted: boolean;
  /** Delivers the host's answer to the request body's pending pull. */
  onRequestChunk?: (message: ExchangeHostMessage & { type: "request-chunk" | "request-body-error" }) => void;
  /** Errors the request body stream, if the function is still reading it. */
  failRequestBody?: (error: unknown) => void;
  /** The function's response body, while it is being relayed. */
  reader?: ReadableStreamDefaultReader<Uint8Array>;
  /** Bytes posted and not yet acknowledged by the host. */
  unacknowledged: number;
  /** Resumes a relay waiting for acknowledgements. */
  resume?: () => void;
  readonly completed: PromiseWithResolvers<void>;
}

/**
 * Resolves after the microtasks queued before it and a few more: what a body that is not written
 * at once loses to. A body from a string, bytes, JSON, a Blob or FormData yields each read within
 * five microtasks on Deno 2.9; one waiting on I/O or on the function takes a macrotask at least.
 * Misjudging only costs speed (a whole body streamed), and no timer or message is spent.
 */
const MICROTASKS_FOR_A_WHOLE_BODY = 16;
async function afterMicrotasks(): Promise<"later"> {
  for (let turn = 0; turn < MICROTASKS_FOR_A_WHOLE_BODY; turn++) await null;
  return "later";
}

function concat(chunks: Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  const whole = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}

export class ChannelServer {
  private readonly served = new Map<number, Served>();
  private closing = false;
  private readonly drained = Promise.withResolvers<void>();

  constructor(
    private readonly handler: Deno.ServeHandler,
    private readonly onError: ErrorHandler,
    private readonly remoteAddr: Deno.NetAddr,
    private readonly post: Post,
  ) {}

  /** Requests still being served. */
  get size(): number {
    return this.served.size;
  }

  /** Settles once no request is being served after `close()`. */
  get finished(): Promise<void> {
    return this.drained.promise;
  }

  /** Takes no new requests (they get a 503); `finished` settles when the open ones are done. */
  close(): void {
    this.closing = true;
    if (this.served.size === 0) this.drained.resolve();
  }

  /** Handles one message from the host about a request. */
  receive(message: ExchangeHostMessage): void {
    if (message.type === "request") {
      // A request that cannot even be built (a method Request refuses, TRACE) or a response that
      // cannot be read (a body already used) fails that request alone, not the worker.
      this.serve(message).catch((error) => this.post({ type: "response-error", id: message.id, message: String(error) }));
      return;
    }
    const served = this.served.get(message.id);
    if (!served) return;
    switch (message.type) {
      case "request-chunk":
      case "request-body-error":
        served.onRequestChunk?.(message);
        break;
      case "abort":
        this.abort(message.id, served);
        break;
      case "ack":
        served.unacknowledged -= message.bytes;
        if (served.unacknowledged < RESPONSE_WINDOW_BYTES) served.resume?.();
        break;
    }
  }

  private async serve(message: RequestMessage): Promise<void> {
    const { id } = message;
    if (this.closing) {
      this.post({ type: "response", id, status: 503, statusText: "", headers: [["content-type", "text/plain;charset=UTF-8"]], body: new TextEncoder().encode("Service Unavailable"), done: true });
      return;
    }
    const served: Served = { controller: new AbortController(), aborted: false, unacknowledged: 0, completed: Promise.withResolvers<void>() };
    // The function may ignore `completed`; a client that went away must not become an unhandled rejection.
    served.completed.promise.catch(() => {});
    this.served.set(id, served);
    try {
      const request = new Request(message.url, {
        method: message.method,
        headers: message.headers,
        body: message.body === "stream" ? this.requestBody(id, served) : message.body,
        signal: served.controller.signal,
      });
      const response = await this.respond(request, served);
      if (served.aborted) {
        await response.body?.cancel().catch(() => {});
        return;
      }
      await this.relay(id, message.method, response, served);
    } finally {
      this.served.delete(id);
      if (this.closing && this.served.size === 0) this.drained.resolve();
    }
  }

  /** The handler's response, or the onError handler's when it throws or answers no Response. */
  private async respond(request: Request, served: Served): Promise<Response> {
    const info: Deno.ServeHandlerInfo<Deno.NetAddr> = { remoteAddr: this.remoteAddr, completed: served.completed.promise };
    try {
      const response = await this.handler(request, info);
      if (response instanceof Response) return response;
      throw new TypeError("Return value from serve handler must be a response or a promise resolving to a response");
    } catch (error) {
      try {
        const response = await this.onError(error);
        if (response instanceof Response) return response;
        throw new TypeError("Return value from onError handler must be a response or a promise resolving to a response");
      } catch (failure) {
        console.error("Exception in onError while handling exception", failure);
        return new Response("Internal Server Error", { status: 500 });
      }
    }
  }

  /** A request body the function reads chunk by chunk from the host, one chunk per read. */
  private requestBody(id: number, served: Served): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          served.failRequestBody = (error) => controller.error(error);
        },
        pull: (controller) =>
          new Promise<void>((resolve) => {
            served.onRequestChunk = (message) => {
              served.onRequestChunk = undefined;
              if (message.type === "request-body-error") controller.error(new TypeError(message.message));
              else if (message.chunk) controller.enqueue(message.chunk);
              else controller.close();
              resolve();
            };
            this.post({ type: "pull", id });
          }),
        cancel: () => {
          served.onRequestChunk = undefined;
          if (!served.aborted) this.post({ type: "request-body-cancel", id });
        },
      },
      { highWaterMark: 0 },
    );
  }

  /**
   * Posts the response: whole when its body is all there by the next macrotask (a string, bytes,
   * JSON), else its head with what there is and then each chunk as the function writes it.
   */
  private async relay(id: number, method: string, response: Response, served: Served): Promise<void> {
    // Response.error() has status 0, which no HTTP answer can carry: Deno.serve fails the request too.
    if (response.status < 200 || response.status > 599) throw new TypeError(`the function answered with status ${response.status}`);
    const head = { id, status: response.status, statusText: response.statusText, headers: [...response.headers] };
    if (!response.body || method === "HEAD" || NULL_BODY_STATUSES.has(response.status)) {
      await response.body?.cancel().catch(() => {});
      this.post({ type: "response", ...head, body: null, done: true });
      served.completed.resolve();
      return;
    }
    const reader = response.body.getReader();
    served.reader = reader;
    const chunks: Uint8Array[] = [];
    let size = 0;
    const later = afterMicrotasks();
    let pending = reader.read();
    try {
      while (size <= WHOLE_RESPONSE_BODY_LIMIT) {
        const result = await Promise.race([pending, later]);
        if (result === "later") break;
        if (result.done) {
          const body = chunks.length === 1 ? chunks[0] : concat(chunks, size);
          const { chunk, transfer } = transferable(body, chunks.length !== 1);
          this.post({ type: "response", ...head, body: chunk, done: true }, transfer);
          served.completed.resolve();
          return;
        }
        if (!(result.value instanceof Uint8Array)) throw new TypeError("a response body chunk must be a Uint8Array");
        chunks.push(result.value);
        size += result.value.byteLength;
        pending = reader.read();
      }
    } catch (error) {
      this.failResponse(id, served, error);
      return;
    }
    if (served.aborted) return;
    const first = size === 0 ? null : transferable(concat(chunks, size), true);
    this.post({ type: "response", ...head, body: first?.chunk ?? null, done: false }, first?.transfer ?? []);
    served.unacknowledged = size;
    await this.stream(id, served, reader, pending);
  }

  /** Relays the rest of a streamed response, pausing while the host holds a window's worth. */
  private async stream(id: number, served: Served, reader: ReadableStreamDefaultReader<Uint8Array>, pending: Promise<ReadableStreamReadResult<Uint8Array>> | null): Promise<void> {
    try {
      while (!served.aborted) {
        if (served.unacknowledged >= RESPONSE_WINDOW_BYTES) {
          await new Promise<void>((resolve) => (served.resume = resolve));
          served.resume = undefined;
          continue;
        }
        const result = await (pending ?? reader.read());
        pending = null;
        if (served.aborted) return;
        if (result.done) {
          this.post({ type: "end", id });
          served.completed.resolve();
          return;
        }
        if (!(result.value instanceof Uint8Array)) throw new TypeError("a response body chunk must be a Uint8Array");
        const { chunk, transfer } = transferable(result.value, false);
        this.post({ type: "chunk", id, chunk }, transfer);
        served.unacknowledged += chunk.byteLength;
      }
    } catch (error) {
      this.failResponse(id, served, error);
    }
  }

  /**
   * The function's response body failed: logged as Deno.serve would, and the host cuts its client
   * off (or, when no head was posted yet, answers in the function's place).
   */
  private failResponse(id: number, served: Served, error: unknown): void {
    if (served.aborted) return;
    console.error("Error while sending the response body:", error);
    this.post({ type: "response-error", id, message: String(error) });
    served.completed.reject(new Deno.errors.Interrupted(String(error)));
  }

  /** The host gave up on the request: its signal aborts and its response stream is cancelled. */
  private abort(id: number, served: Served): void {
    if (served.aborted) return;
    served.aborted = true;
    const reason = new DOMException("The client went away or the request ran out of time", "AbortError");
    served.controller.abort(reason);
    served.failRequestBody?.(reason);
    served.onRequestChunk = undefined;
    served.resume?.();
    served.reader?.cancel(reason).catch(() => {});
    served.completed.reject(new Deno.errors.Interrupted(`request ${id} was aborted`));
  }
}
