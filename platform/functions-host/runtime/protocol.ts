/**
 * Messages between the host and a function's worker. Requests travel over the worker's message
 * channel, not HTTP: the host posts a request (its body whole, or chunk by chunk as the function
 * reads it) and the worker posts the response back (whole, or its head and then chunk by chunk,
 * each streamed chunk acknowledged by the host once its client has taken it).
 */

/** A request body up to this size (by Content-Length) is read whole and posted with the request. */
export const WHOLE_REQUEST_BODY_LIMIT = 1024 * 1024;

/**
 * A response body the function produces at once (a string, bytes, JSON) up to this size goes back
 * in one message with the head; a longer one, or one still being written, is streamed.
 */
export const WHOLE_RESPONSE_BODY_LIMIT = 1024 * 1024;

/**
 * Bytes of a streamed response the worker may post before the host says its client took them: the
 * most the host holds for a slow client (plus the one chunk in hand), and the backpressure a
 * function's stream feels.
 */
export const RESPONSE_WINDOW_BYTES = 256 * 1024;

/** Header name and value pairs in order (a repeated name, Set-Cookie, stays repeated). */
export type HeaderList = [string, string][];

/** Host → worker: import and serve this function. */
export interface BootMessage {
  type: "boot";
  slug: string;
  /** file:// URL of the function's entrypoint. */
  entrypoint: string;
  /** The function's calls to the gateway leave from this loopback address (see host-config.ts). */
  egress: { origin: string; localAddress: string };
  /** Where the host listens: what the function's `Deno.serve` reports as its address. */
  listen: { hostname: string; port: number };
}

/** Host → worker: one request to the function's handler. */
export interface RequestMessage {
  type: "request";
  id: number;
  method: string;
  url: string;
  headers: HeaderList;
  /** The whole body, none, or "stream": the worker asks for it chunk by chunk (`pull`). */
  body: Uint8Array<ArrayBuffer> | null | "stream";
}

/** Host → worker, about the request `id`. */
export type ExchangeHostMessage =
  | RequestMessage
  /** The next chunk of a streamed request body, or null at its end. */
  | { type: "request-chunk"; id: number; chunk: Uint8Array<ArrayBuffer> | null }
  /** The request body could not be read (the client's upload broke). */
  | { type: "request-body-error"; id: number; message: string }
  /** The host has given up on the request (client gone, wall-clock limit): abort its signal. */
  | { type: "abort"; id: number }
  /** The host's client took `bytes` more of the streamed response. */
  | { type: "ack"; id: number; bytes: number };

/** Worker → host, about the request `id`. */
export type ExchangeWorkerMessage =
  /** The response head; with the whole body when `done`, else with its first chunks. */
  | { type: "response"; id: number; status: number; statusText: string; headers: HeaderList; body: Uint8Array<ArrayBuffer> | null; done: boolean }
  /** The next chunk of a streamed response. */
  | { type: "chunk"; id: number; chunk: Uint8Array<ArrayBuffer> }
  /** The streamed response ended. */
  | { type: "end"; id: number }
  /** The function's response stream failed: the client's connection is cut, as Deno.serve does. */
  | { type: "response-error"; id: number; message: string }
  /** The function reads its request body: send the next chunk. */
  | { type: "pull"; id: number }
  /** The function cancelled its request body. */
  | { type: "request-body-cancel"; id: number };

/** Worker → host, about the worker itself. */
export type LifecycleMessage =
  /** The function's handler is registered: requests may be posted. */
  | { type: "ready" }
  /** The module failed to load or registered no handler. */
  | { type: "boot-error"; message: string }
  /** The module failed after it had started serving (a top-level await rejected later); with its stack. */
  | { type: "fatal"; message: string }
  /** The function called Deno.exit. */
  | { type: "exit"; code: number }
  /** An EdgeRuntime.waitUntil task started (+1) or settled (-1). */
  | { type: "background"; delta: 1 | -1 };

/** Worker → host. */
export type WorkerMessage = LifecycleMessage | ExchangeWorkerMessage;

/** Host → worker. */
export type HostMessage = BootMessage | ExchangeHostMessage;

/**
 * Below this size a chunk is copied by the structured clone rather than transferred: on Deno 2.9
 * a transfer costs more than copying a few kilobytes (measured: 2 bytes cloned 40 µs a round trip,
 * transferred 61–96 µs; 64 KiB cloned 140–220 µs, transferred 70 µs).
 */
const TRANSFER_FROM_BYTES = 16 * 1024;

/**
 * A chunk ready to post, and the buffers to transfer with it: a view into a larger buffer is
 * copied first (cloning it would copy the whole buffer), a large chunk the sender owns is
 * transferred, and anything else is left to the clone to copy (a function may reuse its buffer).
 */
export function transferable(chunk: Uint8Array, owned: boolean): { chunk: Uint8Array<ArrayBuffer>; transfer: ArrayBuffer[] } {
  const buffer = chunk.buffer;
  const large = chunk.byteLength >= TRANSFER_FROM_BYTES;
  if (!(buffer instanceof ArrayBuffer) || chunk.byteOffset !== 0 || chunk.byteLength !== buffer.byteLength) {
    const copy = new Uint8Array(chunk);
    return { chunk: copy, transfer: large ? [copy.buffer] : [] };
  }
  return { chunk: new Uint8Array(buffer), transfer: owned && large ? [buffer] : [] };
}
