/**
 * The host's side of one request over the host↔worker channel (see protocol.ts): posts the
 * request to the worker, with its body whole when it is small and announced, else chunk by chunk
 * as the function reads it, and turns the worker's answer into the Response for the client: a
 * whole body as bytes (no stream to relay), a streamed one as a ReadableStream fed by the worker's
 * chunks, acknowledged as the client takes them so the worker never runs more than a window ahead.
 */
import { transferable, WHOLE_REQUEST_BODY_LIMIT, type ExchangeHostMessage, type ExchangeWorkerMessage, type HeaderList } from "./protocol.ts";

type Post = (message: ExchangeHostMessage, transfer?: ArrayBuffer[]) => void;
type ResponseMessage = ExchangeWorkerMessage & { type: "response" };

/**
 * How much of a request body the function did not read is still taken from the client, and for how
 * long, before its answer is sent (a 413 for a body over a function's cap, say). Deno's server
 * drops the connection once an answer is out and the body unread, cutting a client still sending,
 * which then sees EPIPE or a reset instead of the answer; draining a bounded amount first, as
 * nginx's lingering close does, lets it finish sending and read the answer. A client that keeps
 * sending past either bound gets the answer with the rest cut.
 */
const UNREAD_BODY_DRAIN_BYTES = 64 * 1024 * 1024;
const UNREAD_BODY_DRAIN_MS = 10_000;

/** Reads and discards what is left of `reader` within the drain's bounds, then cancels it. */
async function drainUnreadBody(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeUp = new Promise<null>((resolve) => (timer = setTimeout(resolve, UNREAD_BODY_DRAIN_MS, null)));
  let drained = 0;
  try {
    while (drained <= UNREAD_BODY_DRAIN_BYTES) {
      const next = await Promise.race([reader.read(), timeUp]);
      if (next === null || next.done) break;
      drained += next.value.byteLength;
    }
  } catch {
    // The client went away: nothing left to drain.
  } finally {
    clearTimeout(timer);
  }
  await reader.cancel().catch(() => {});
}

/** The function's response failed before its head was sent (its body stream threw at once). */
export class ResponseFailed extends Error {}

/** The request body could not be read from the client. */
export class RequestBodyFailed extends Error {}

export class Exchange {
  private readonly head = Promise.withResolvers<Response>();
  private stream?: ReadableStreamDefaultController<Uint8Array>;
  /** Bytes of the streamed response received and not yet acknowledged. */
  private unacknowledged = 0;
  private requestBody?: ReadableStreamDefaultReader<Uint8Array>;
  /** Settles once what the function left unread of the request body is drained (see drainUnreadBody). */
  private unreadBodyDrained: Promise<void> = Promise.resolve();
  private settled = false;

  /**
   * @param post sends a message to the worker
   * @param onSettled called once, when the response is delivered whole, its stream ends, or the
   *   exchange fails or is aborted
   */
  constructor(
    readonly id: number,
    private readonly post: Post,
    private readonly onSettled: () => void,
  ) {
    // Whoever awaits `send` sees a rejection; one nobody awaits any more stays quiet.
    this.head.promise.catch(() => {});
  }

  /**
   * Posts the request; resolves with the Response for the client once the worker's head arrives,
   * and rejects as soon as the exchange is aborted, even while a whole body is still being read.
   */
  send(request: Request, url: URL): Promise<Response> {
    this.postRequest(request, url).catch((error) => this.fail(new RequestBodyFailed(String(error))));
    return this.head.promise;
  }

  private async postRequest(request: Request, url: URL): Promise<void> {
    const headers: HeaderList = [...request.headers];
    const target = `${url.origin}${url.pathname}${url.search}`;
    const { method } = request;
    if (!request.body || method === "GET" || method === "HEAD") {
      this.post({ type: "request", id: this.id, method, url: target, headers, body: null });
    } else if (Number(request.headers.get("content-length") ?? Infinity) <= WHOLE_REQUEST_BODY_LIMIT) {
      const whole = new Uint8Array(await request.arrayBuffer());
      if (this.settled) return;
      const { chunk, transfer } = transferable(whole, true);
      this.post({ type: "request", id: this.id, method, url: target, headers, body: chunk }, transfer);
    } else {
      this.requestBody = request.body.getReader();
      this.post({ type: "request", id: this.id, method, url: target, headers, body: "stream" });
    }
  }

  /** Handles one message from the worker about this request. */
  receive(message: ExchangeWorkerMessage): void {
    if (this.settled) return;
    try {
      this.dispatch(message);
    } catch (error) {
      // Whatever the worker sent, the host itself must not throw: the request fails instead.
      this.fail(new ResponseFailed(String(error)));
    }
  }

  private dispatch(message: ExchangeWorkerMessage): void {
    switch (message.type) {
      case "response":
        this.respond(message);
        break;
      case "chunk":
        this.unacknowledged += message.chunk.byteLength;
        this.stream?.enqueue(message.chunk);
        break;
      case "end":
        this.settle();
        this.stream?.close();
        break;
      case "response-error":
        this.fail(new ResponseFailed(message.message));
        break;
      case "pull":
        void this.pullRequestBody();
        break;
      case "request-body-cancel":
        this.releaseRequestBody();
        break;
    }
  }

  /**
   * The host gives up (client gone, wall-clock limit, worker failed): the worker is told, a pending
   * head rejects with `reason`, and a streaming body errors, which cuts the client's connection.
   */
  abort(reason: unknown, tellWorker = true): void {
    if (this.settled) return;
    if (tellWorker) this.post({ type: "abort", id: this.id });
    this.fail(reason);
  }

  private fail(reason: unknown): void {
    if (this.settled) return;
    this.settle();
    this.head.reject(reason);
    this.stream?.error(reason);
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.releaseRequestBody();
    this.onSettled();
  }

  /** The function is done with the request body: what it left unread is drained, not cut. */
  private releaseRequestBody(): void {
    if (this.requestBody) this.unreadBodyDrained = drainUnreadBody(this.requestBody);
    this.requestBody = undefined;
  }

  private respond(message: ResponseMessage): void {
    const init = { status: message.status, statusText: message.statusText, headers: message.headers };
    if (message.done) {
      this.settle();
      const response = new Response(message.body, init);
      void this.unreadBodyDrained.then(() => this.head.resolve(response));
      return;
    }
    const first = message.body;
    this.unacknowledged = first?.byteLength ?? 0;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.stream = controller;
          if (first) controller.enqueue(first);
        },
        // Called when the client has taken everything queued and wants more: what it took is
        // acknowledged, so the worker may send the next window.
        pull: () => {
          if (this.settled || this.unacknowledged === 0) return;
          this.post({ type: "ack", id: this.id, bytes: this.unacknowledged });
          this.unacknowledged = 0;
        },
        cancel: (reason) => this.abort(reason),
      },
      { highWaterMark: 0 },
    );
    this.head.resolve(new Response(body, init));
  }

  /** Answers the function's read of a streamed request body with the client's next chunk. */
  private async pullRequestBody(): Promise<void> {
    const reader = this.requestBody;
    if (!reader) {
      this.post({ type: "request-chunk", id: this.id, chunk: null });
      return;
    }
    try {
      const { done, value } = await reader.read();
      if (this.settled) return;
      if (done) {
        this.requestBody = undefined;
        this.post({ type: "request-chunk", id: this.id, chunk: null });
      } else {
        const { chunk, transfer } = transferable(value, true);
        this.post({ type: "request-chunk", id: this.id, chunk }, transfer);
      }
    } catch (error) {
      if (!this.settled) this.post({ type: "request-body-error", id: this.id, message: String(error) });
    }
  }
}
