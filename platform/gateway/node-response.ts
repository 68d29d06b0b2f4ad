import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";

/** Headers that describe one hop of a response and are not passed on. */
const HOP_BY_HOP_RESPONSE = new Set(["connection", "keep-alive", "transfer-encoding"]);

/** Response headers for the client: the service's own, minus hop-by-hop ones, plus `extra` where the service set none. */
export function clientHeaders(headers: IncomingHttpHeaders | Headers, extra: Record<string, string>): OutgoingHttpHeaders {
  const result: OutgoingHttpHeaders = {};
  if (headers instanceof Headers) {
    headers.forEach((value, name) => {
      if (name !== "set-cookie" && !HOP_BY_HOP_RESPONSE.has(name)) result[name] = value;
    });
    const cookies = headers.getSetCookie();
    if (cookies.length > 0) result["set-cookie"] = cookies;
  } else {
    for (const name in headers) {
      if (!HOP_BY_HOP_RESPONSE.has(name)) result[name] = headers[name];
    }
  }
  for (const name in extra) {
    if (result[name] === undefined) result[name] = extra[name];
  }
  return result;
}

/**
 * Sends a web Response (an in-process service's, or one of the gateway's own errors) to a node
 * client, streaming its body with backpressure; a client that leaves cancels the body.
 */
export function sendWebResponse(outgoing: ServerResponse, response: Response, extra: Record<string, string>): void {
  outgoing.writeHead(response.status, response.statusText || undefined, clientHeaders(response.headers, extra));
  if (!response.body) {
    outgoing.end();
    return;
  }
  const body = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>);
  body.on("error", () => outgoing.destroy());
  outgoing.on("close", () => body.destroy());
  body.pipe(outgoing);
}
