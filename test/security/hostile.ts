/**
 * Building blocks of the hostile-input suite: a client that sends exactly the bytes it is given
 * (fetch for most requests, a raw HTTP/1.1 socket for what fetch refuses to send: a NUL in a
 * header or raw bytes in a path), the fixed corpus of hostile values, and one check per service
 * that an answer is in its documented error shape.
 */
import { connect } from "node:net";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

/** One request of the suite. `path` is sent as is (already percent-encoded where it should be). */
export interface HostileRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** What came back: status, content type and body text. */
export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** Sends `request` through the gateway from a client address of its own (so no shared rate limit fills). */
export async function send(request: HostileRequest): Promise<Answer> {
  let response: Response;
  try {
    response = await fetchFrom(simulatedClientAddress())(`${env.url}${request.path}`, { method: request.method, headers: request.headers, body: request.body as BodyInit | undefined, redirect: "manual" });
  } catch (error) {
    throw new Error(`${request.method} ${request.path.slice(0, 120)}: the connection failed (${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message})`);
  }
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", text: await response.text() };
}

/**
 * Sends raw bytes as one HTTP/1.1 request on a fresh connection and reads the status line. A
 * connection reset, or a connection closed without an answer, is an error.
 */
export function sendRaw(head: string, body: Uint8Array = new Uint8Array(0)): Promise<Answer> {
  const { hostname, port } = new URL(env.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress: simulatedClientAddress() });
    const chunks: Buffer[] = [];
    socket.setTimeout(20_000, () => socket.destroy(new Error("no answer within 20 s")));
    socket.on("connect", () => {
      socket.write(Buffer.concat([Buffer.from(`${head}\r\nHost: ${hostname}:${port}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`, "latin1"), body]));
    });
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error) => reject(new Error(`raw request ${JSON.stringify(head.slice(0, 80))}: ${error.message}`)));
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (!status) return reject(new Error(`raw request ${JSON.stringify(head.slice(0, 80))}: the connection closed without an answer`));
      const [headers, ...rest] = text.split("\r\n\r\n");
      resolve({ status: Number(status[1]), contentType: /\r\ncontent-type: *([^\r\n]*)/i.exec(headers)?.[1] ?? "", text: rest.join("\r\n\r\n") });
    });
  });
}

/** A string of `length` characters. */
const long = (length: number) => "x".repeat(length);

/** Hostile text values: put in a path segment, a query value or a JSON field. */
export const HOSTILE_TEXT: readonly string[] = [
  "\u0000",
  "a\u0000b",
  long(100_000),
  "",
  " ",
  "%",
  "%00",
  "\ud800",
  "😀\u202e",
  "../../../etc/passwd",
  "' or '1'='1' --",
  "<script>alert(1)</script>",
  "1e400",
  "-99999999999999999999999",
  "99999999999999999999999",
  "NaN",
  "null",
  "402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10",
  "{402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10}",
];

/**
 * Percent-encoding of a hostile value for a URL. encodeURIComponent cannot encode a lone
 * surrogate, so that one goes as the bytes a careless client would send (CESU-8, not UTF-8).
 */
export function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return "%ED%A0%80";
  }
}

/** Raw escapes no encoder produces: malformed, invalid UTF-8, overlong, an encoded surrogate. */
export const RAW_ESCAPES: readonly string[] = ["%E0%A4%A", "%FF", "%C3%28", "%C0%80", "%ED%A0%80", "%zz"];

/** JSON values of every type, the wrong one for almost every field. */
/** `depth` arrays inside one another around `leaf`, built without recursion. */
export function nested(depth: number, leaf: unknown = null): unknown {
  let value: unknown = leaf;
  for (let level = 0; level < depth; level += 1) value = [value];
  return value;
}

export const WRONG_TYPES: readonly unknown[] = [null, true, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, "", "\u0000", long(100_000), [], [null], {}, { nested: { deep: [1] } }];

/** Bodies that are not what any endpoint wants, as raw bytes or text. */
export const HOSTILE_BODIES: readonly (string | Uint8Array)[] = [
  "",
  "{",
  '{"a":',
  "[1,2",
  "nul",
  "null",
  "[]",
  '"text"',
  "1e999999",
  "-0",
  '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}',
  `${"[".repeat(10_000)}${"]".repeat(10_000)}`,
  // Nesting past the 64-level cap, deep enough to overflow any recursive walk after parsing.
  `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
  `{"text":${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}}`,
  JSON.stringify({ value: long(100_000) }),
  new Uint8Array([0xff, 0xfe, 0xfd]),
  new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
  new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x00, 0x22, 0x7d]),
  '{"a":"\\u0000"}',
  '{"a":"\\ud800"}',
];

/** Content types sent with bodies, right and wrong. */
export const CONTENT_TYPES: readonly (string | null)[] = ["application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1", null];

/** Methods tried on every endpoint. */
export const METHODS: readonly string[] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];

function parse(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isText = (value: unknown) => typeof value === "string";

/** The platform's own answers in front of the functions: verify_jwt failures and rate limits. */
function platformFunctionsAnswer(answer: Answer, body: Record<string, unknown> | null): boolean {
  if (answer.status === 401 && body && isText(body.msg)) return true;
  return answer.status === 429 && body !== null && isText(body.message);
}

/** The services whose documented error shapes the suite checks. */
export type Service = "gamification" | "portal" | "approval-page" | "workflows" | "auth" | "storage" | "rest";

/** Why `answer` is not in `service`'s documented shape, or null when it is. */
export function shapeProblem(service: Service, request: HostileRequest, answer: Answer): string | null {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status < 400 || request.method === "HEAD" || request.method === "OPTIONS") return null;
  // The gateway's HTTP server refuses a request head over 16 KB before any service sees it, with an
  // empty 431 (Kong answers such requests itself too).
  if (answer.status === 431) return null;
  const body = parse(answer.text);
  const ok = (() => {
    switch (service) {
      case "gamification": {
        const error = body?.error as Record<string, unknown> | undefined;
        return body?.success === false && isText(error?.codigo) && isText(error?.mensagem) && isText(body?.timestamp);
      }
      case "portal": {
        const error = body?.error as Record<string, unknown> | undefined;
        return (isText(error?.code) && isText(error?.message)) || platformFunctionsAnswer(answer, body);
      }
      case "approval-page":
        return answer.contentType.startsWith("text/html") && answer.text.includes('role="alert"');
      case "workflows":
        return (isText(body?.error) && isText(body?.code)) || platformFunctionsAnswer(answer, body);
      case "auth":
        // GoTrue's router answers an unknown path or method with its plain-text 404.
        if (answer.status === 404 && answer.text.trim() === "404 page not found") return true;
        return (body !== null && (isText(body.msg) || isText(body.message) || isText(body.error_description)) && body.code !== undefined) || (isText(body?.error) && isText(body?.error_description));
      case "storage":
        return isText(body?.statusCode) && isText(body?.error) && isText(body?.message);
      case "rest":
        return isText(body?.code) && isText(body?.message);
    }
  })();
  return ok ? null : `answered ${answer.status} outside the ${service} error shape: ${answer.contentType} ${answer.text.slice(0, 300)}`;
}
