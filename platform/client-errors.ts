import { STATUS_CODES, type Server } from "node:http";
import type { Duplex } from "node:stream";

/** How long a refused client may keep sending before its connection is cut. */
const DRAIN_MS = 5_000;

/** The status a request node could not parse gets, as node's own default picks it. */
function statusOf(error: NodeJS.ErrnoException): number {
  if (error.code === "HPE_HEADER_OVERFLOW") return 431;
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return 408;
  return 400;
}

/**
 * Answers requests node cannot parse (a header over the size limit, a NUL in a header) with the
 * status node would pick, then closes gracefully. Node's default destroys the socket while the
 * client is still sending: the unread bytes make the kernel send a reset, and a client that has
 * not yet read the answer gets ECONNRESET instead of the 431. Here the server half-closes and reads
 * what is left (for at most DRAIN_MS), as nginx's lingering close does.
 */
export function answerClientErrors(server: Server): void {
  const answered = new WeakSet<Duplex>();
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser reports again for every chunk that arrives after the first failure.
    if (answered.has(socket)) return;
    answered.add(socket);
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const status = statusOf(error);
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    socket.on("data", () => {});
    socket.resume();
    setTimeout(() => socket.destroy(), DRAIN_MS).unref();
  });
}
