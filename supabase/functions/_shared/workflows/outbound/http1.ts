/**
 * One HTTP/1.1 exchange over a connection to an address the caller already checked: the socket is
 * opened to that IP (never to the name, so DNS cannot be asked again and answer differently), and
 * TLS verifies the certificate against the URL's host name, sent as SNI. `fetch` offers no portable
 * way to do this (see docs/workflow-blocks.md, "The outbound guard"), so requests are written and
 * responses read here, over `node:net` / `node:tls` sockets: the same modules postgres.js relies on
 * in Supabase Edge Functions, and what Node (vitest) and Deno (the functions host) both provide.
 *
 * Deliberately small: one request per connection (`Connection: close`), no HTTP/2, no proxies. The
 * body is streamed to the caller as it arrives (model providers stream server-sent events).
 */
import { connect as connectTcp, isIP, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import { OutboundError } from "./errors.ts";

/** A request to send to a checked address. */
export interface PinnedRequest {
  url: URL;
  /** The IP address to connect to (the guard checked it). */
  address: string;
  method: string;
  headers: Headers;
  body: Uint8Array | null;
  /** Aborting it closes the connection; the reason is what the exchange (or the body) fails with. */
  signal: AbortSignal;
  /** Extra root certificates (PEM) trusted for this request, besides the system's. */
  caCerts?: string[];
}

/** The response head, with the body still streaming. */
export interface PinnedResponse {
  status: number;
  statusText: string;
  headers: Headers;
  /** Null when the response has no body (HEAD, 204, 304). */
  body: ReadableStream<Uint8Array> | null;
}

const MAX_LINE_BYTES = 16 * 1024;
const MAX_HEAD_BYTES = 64 * 1024;
const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

function protocolError(message: string): OutboundError {
  return new OutboundError("OUTBOUND_PROTOCOL", `the server's answer is not valid HTTP/1.1: ${message}`);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function indexOfCrlf(bytes: Uint8Array, from: number): number {
  for (let i = from; i < bytes.length - 1; i++) if (bytes[i] === 13 && bytes[i + 1] === 10) return i;
  return -1;
}

/** Reads a socket's bytes as lines and counted runs, pulling only as much as asked. */
class ByteReader {
  private buffer: Uint8Array = new Uint8Array(0);
  private ended = false;

  constructor(private readonly source: AsyncIterator<Uint8Array>) {}

  private async pull(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.source.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    this.buffer = concat(this.buffer, next.value);
    return true;
  }

  /** The next CRLF-terminated line, without the CRLF. */
  async line(what: string): Promise<string> {
    let searched = 0;
    for (;;) {
      const end = indexOfCrlf(this.buffer, Math.max(0, searched - 1));
      if (end >= 0) {
        const text = latin1.decode(this.buffer.subarray(0, end));
        this.buffer = this.buffer.subarray(end + 2);
        return text;
      }
      if (this.buffer.length > MAX_LINE_BYTES) throw protocolError(`${what} is longer than ${MAX_LINE_BYTES} bytes`);
      searched = this.buffer.length;
      if (!(await this.pull())) throw new OutboundError("OUTBOUND_CONNECTION", `the server closed the connection in the middle of the ${what}`);
    }
  }

  /** Up to `max` bytes (at least one), or null at the end of the stream. */
  async some(max: number): Promise<Uint8Array | null> {
    if (this.buffer.length === 0 && !(await this.pull())) return null;
    const take = this.buffer.subarray(0, Math.min(max, this.buffer.length));
    this.buffer = this.buffer.subarray(take.length);
    return take;
  }
}

/**
 * Opens the connection: TCP to the address, then TLS for https with the URL's host as SNI. The
 * signal aborts a connection attempt that hangs (an address that never answers).
 */
function open(request: PinnedRequest): Promise<Socket> {
  const { url, address, signal } = request;
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  return new Promise<Socket>((resolve, reject) => {
    let socket: Socket;
    const onAbort = () => {
      socket.destroy();
      reject(signal.reason);
    };
    const fail = (error: Error) => {
      signal.removeEventListener("abort", onAbort);
      socket.destroy();
      reject(new OutboundError("OUTBOUND_CONNECTION", `could not connect to ${url.host} (${address}): ${error.message}`, { cause: error, beforeSending: true }));
    };
    const opened = () => {
      signal.removeEventListener("abort", onAbort);
      resolve(socket);
    };
    if (url.protocol === "https:") {
      const host = url.hostname.replace(/^\[|\]$/g, "");
      socket = connectTls({
        host: address,
        port,
        // SNI carries names only; the certificate is checked against `servername`, else `host`.
        ...(isIP(host) ? {} : { servername: host }),
        ALPNProtocols: ["http/1.1"],
        ...(request.caCerts?.length ? { ca: request.caCerts } : {}),
      });
      socket.once("secureConnect", opened);
    } else {
      socket = connectTcp({ host: address, port });
      socket.once("connect", opened);
    }
    socket.once("error", fail);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The request head: the origin-form target, Host, the caller's headers, framing. */
function head(request: PinnedRequest): Uint8Array {
  const { url, method, headers, body } = request;
  const lines = [`${method} ${url.pathname || "/"}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (const [name, value] of headers) {
    if (/^(host|connection|content-length|transfer-encoding|keep-alive|upgrade|te)$/i.test(name)) continue;
    if (/[\r\n\0]/.test(value)) throw new OutboundError("OUTBOUND_INVALID_URL", `header ${name} holds a line break`);
    lines.push(`${name}: ${value}`);
  }
  lines.push("Connection: close");
  if (body !== null || /^(POST|PUT|PATCH)$/.test(method)) lines.push(`Content-Length: ${body?.length ?? 0}`);
  return encoder.encode(`${lines.join("\r\n")}\r\n\r\n`);
}

async function readHeaders(reader: ByteReader): Promise<Headers> {
  const headers = new Headers();
  let total = 0;
  for (;;) {
    const line = await reader.line("response headers");
    if (line === "") return headers;
    total += line.length + 2;
    if (total > MAX_HEAD_BYTES) throw protocolError(`the headers are longer than ${MAX_HEAD_BYTES} bytes`);
    const colon = line.indexOf(":");
    if (colon <= 0 || /^[ \t]/.test(line)) throw protocolError(`malformed header line "${line.slice(0, 80)}"`);
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      throw protocolError(`malformed header line "${line.slice(0, 80)}"`);
    }
  }
}

type Framing = { kind: "none" } | { kind: "length"; remaining: number } | { kind: "chunked" } | { kind: "close" };

function framingOf(method: string, status: number, headers: Headers): Framing {
  if (method === "HEAD" || status === 204 || status === 304) return { kind: "none" };
  const transfer = headers.get("transfer-encoding");
  if (transfer !== null) {
    if (!/(^|,)\s*chunked\s*$/i.test(transfer)) throw protocolError(`unsupported transfer-encoding "${transfer}"`);
    return { kind: "chunked" };
  }
  const length = headers.get("content-length");
  if (length !== null) {
    const values = new Set(length.split(",").map((value) => value.trim()));
    const [only] = values;
    if (values.size !== 1 || !/^\d{1,15}$/.test(only)) throw protocolError(`bad content-length "${length}"`);
    return { kind: "length", remaining: Number(only) };
  }
  return { kind: "close" };
}

/** The body as a stream that pulls from the socket as the reader reads; cancelling closes the socket. */
function bodyStream(reader: ByteReader, framing: Framing, socket: Socket, signal: AbortSignal): ReadableStream<Uint8Array> {
  let chunkLeft = 0;
  let finished = false;
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    finished = true;
    socket.destroy();
    controller.close();
  };
  const next = async (controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> => {
    if (framing.kind === "length") {
      if (framing.remaining === 0) return finish(controller);
      const bytes = await reader.some(framing.remaining);
      if (bytes === null) throw new OutboundError("OUTBOUND_CONNECTION", `the server closed the connection with ${framing.remaining} bytes of the body still to come`);
      framing.remaining -= bytes.length;
      controller.enqueue(bytes);
      return;
    }
    if (framing.kind === "close") {
      const bytes = await reader.some(64 * 1024);
      if (bytes === null) return finish(controller);
      controller.enqueue(bytes);
      return;
    }
    if (chunkLeft === 0) {
      const sizeLine = await reader.line("chunk size");
      const size = /^([0-9a-fA-F]{1,12})[ \t]*(;.*)?$/.exec(sizeLine);
      if (!size) throw protocolError(`bad chunk size "${sizeLine.slice(0, 40)}"`);
      chunkLeft = parseInt(size[1], 16);
      if (chunkLeft === 0) {
        while ((await reader.line("trailer")) !== "");
        return finish(controller);
      }
    }
    const bytes = await reader.some(chunkLeft);
    if (bytes === null) throw new OutboundError("OUTBOUND_CONNECTION", "the server closed the connection in the middle of a chunk");
    chunkLeft -= bytes.length;
    if (chunkLeft === 0 && (await reader.line("chunk end")) !== "") throw protocolError("a chunk is longer than its size");
    controller.enqueue(bytes);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        await next(controller);
      } catch (error) {
        socket.destroy();
        throw signal.aborted ? signal.reason : error;
      }
    },
    cancel() {
      if (!finished) socket.destroy();
    },
  });
}

/**
 * Sends `request` to its checked address and resolves with the response head once it has arrived;
 * the body streams after. Rejects with an OutboundError (or the signal's reason when it aborted).
 */
export async function exchange(request: PinnedRequest): Promise<PinnedResponse> {
  const { signal } = request;
  signal.throwIfAborted();
  const requestHead = head(request);
  const socket = await open(request);
  // Failures after the connection is up reach whoever reads (the iterator below); without a
  // listener Node would treat a late reset as an uncaught error.
  socket.on("error", () => {});
  const onAbort = () => socket.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
  signal.addEventListener("abort", onAbort, { once: true });
  socket.once("close", () => signal.removeEventListener("abort", onAbort));
  try {
    socket.write(request.body ? concat(requestHead, request.body) : requestHead);
    const reader = new ByteReader(socket[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>);
    for (;;) {
      const statusLine = await reader.line("status line");
      const match = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
      if (!match) throw protocolError(`bad status line "${statusLine.slice(0, 80)}"`);
      const status = Number(match[1]);
      const headers = await readHeaders(reader);
      // 1xx answers (100 Continue, 103 Early Hints) come before the real one.
      if (status >= 100 && status < 200) continue;
      const framing = framingOf(request.method, status, headers);
      if (framing.kind === "none") socket.destroy();
      return { status, statusText: match[2] ?? "", headers, body: framing.kind === "none" ? null : bodyStream(reader, framing, socket, signal) };
    }
  } catch (error) {
    socket.destroy();
    if (signal.aborted) throw signal.reason;
    if (error instanceof OutboundError) throw error;
    throw new OutboundError("OUTBOUND_CONNECTION", `the connection to ${request.url.host} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
