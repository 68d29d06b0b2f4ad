/**
 * The outbound guard: every URL the service calls on a user's behalf (the API block, vector
 * stores, model providers, webhook subscriptions) goes through `guardedFetch`, which
 *  - accepts only absolute http(s) URLs without credentials;
 *  - resolves the host and refuses it when any of its addresses is not public (addresses.ts), unless
 *    `OUTBOUND_ALLOWED_HOSTS` names the host or a range holding the address on the URL's port, and
 *    always when `OUTBOUND_DENIED_ADDRESSES` lists the host or an address on that port;
 *  - connects to the address it checked, so a second DNS answer cannot swap in another one (DNS
 *    rebinding), with TLS still verified against the host name (http1.ts);
 *  - follows redirects itself, checking every hop the same way (at most `maxRedirects`);
 *  - enforces a time limit over the whole exchange, body included, and a cap on the body's size.
 * Failures are OutboundErrors with a stable code.
 */
import { lookup } from "node:dns/promises";
import { addressListed, allowListFromEnv, deniedListFromEnv, hostListed, nonPublicRange, parseAddress, DENIED_ADDRESSES_VARIABLE, EMPTY_ALLOW_LIST, type AddressList, type AllowList } from "./addresses.ts";
import { OutboundError, type OutboundErrorCode } from "./errors.ts";
import { exchange, type PinnedResponse } from "./http1.ts";

export { OutboundError, type OutboundErrorCode } from "./errors.ts";

/** Default time limit of one guarded call, body included. */
export const DEFAULT_OUTBOUND_TIMEOUT_MS = 30_000;
/** Default number of redirects followed. */
export const DEFAULT_MAX_REDIRECTS = 5;
/** Default cap on a response body (after decompression). */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** What the guard checks against: the allow-list, what is denied anyway, and how names resolve (injectable for tests). */
export interface OutboundPolicy {
  allow: AllowList;
  /** Refused whatever `allow` says (the local stack's own services); nothing when absent. */
  deny?: AddressList;
  resolve(host: string): Promise<string[]>;
}

/** Every address a name resolves to, as the operating system's resolver answers. */
async function resolveHost(host: string): Promise<string[]> {
  const answers = await lookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

/** The policy of this process: `OUTBOUND_ALLOWED_HOSTS`, `OUTBOUND_DENIED_ADDRESSES` and the system resolver. */
export function defaultOutboundPolicy(): OutboundPolicy {
  return { allow: allowListFromEnv(), deny: deniedListFromEnv(), resolve: resolveHost };
}

/** The outcome of checking a URL. */
export type OutboundCheck =
  | { ok: true; url: URL; address: string; addresses: string[] }
  | { ok: false; reason: string; code: OutboundErrorCode };

const RANGE_NAMES: Record<string, string> = {
  loopback: "loopback",
  private: "private",
  linkLocal: "link-local (cloud metadata lives here)",
  uniqueLocal: "unique-local",
  carrierGradeNat: "carrier-grade NAT",
  unspecified: "unspecified",
  multicast: "multicast",
  broadcast: "broadcast",
  reserved: "reserved",
  ipv4Compatible: "IPv4-compatible",
};

/**
 * Checks a URL without calling it: scheme, credentials, and every address its host resolves to.
 * `address` is the one to connect to (the first the resolver gave).
 */
export async function checkOutboundUrl(input: string | URL, policy: OutboundPolicy = defaultOutboundPolicy()): Promise<OutboundCheck> {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, code: "OUTBOUND_INVALID_URL", reason: `"${String(input).slice(0, 200)}" is not an absolute URL` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, code: "OUTBOUND_INVALID_URL", reason: `only http and https URLs can be called, not ${url.protocol}` };
  if (url.username || url.password) return { ok: false, code: "OUTBOUND_INVALID_URL", reason: "a URL with a user name or password cannot be called; send an Authorization header instead" };
  // The WHATWG parser has already turned decimal, octal and hex IPv4 spellings into dotted quads.
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
  const literal = parseAddress(host);
  let addresses: string[];
  if (literal) addresses = [host];
  else {
    try {
      addresses = await policy.resolve(host);
    } catch (error) {
      return { ok: false, code: "OUTBOUND_CONNECTION", reason: `${host} does not resolve (${error instanceof Error ? error.message : String(error)})` };
    }
    if (addresses.length === 0) return { ok: false, code: "OUTBOUND_CONNECTION", reason: `${host} does not resolve` };
  }
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  const name = host.toLowerCase();
  const deny = policy.deny ?? EMPTY_ALLOW_LIST;
  const denied = (what: string): OutboundCheck => ({ ok: false, code: "OUTBOUND_BLOCKED", reason: `port ${port} of ${what} is listed in ${DENIED_ADDRESSES_VARIABLE} (the local stack's own services), which workflows may not call` });
  if (hostListed(deny, name, port)) return denied(host);
  const hostAllowed = hostListed(policy.allow, name, port);
  for (const text of addresses) {
    const address = parseAddress(text);
    if (!address) return { ok: false, code: "OUTBOUND_BLOCKED", reason: `${host} resolves to "${text}", which is not an IP address` };
    // Checked before the allow-list, and for every address, so no entry of it can open these.
    if (addressListed(deny, address, port)) return denied(literal ? host : `${host} (${text})`);
    if (hostAllowed) continue;
    const range = nonPublicRange(address);
    if (range !== null && !addressListed(policy.allow, address, port)) {
      // Loopback open on other ports only: say so, or "may not call" would read as a contradiction.
      const what = literal ? `${host} is` : `${host} resolves to ${text},`;
      const elsewhere = addressListed(policy.allow, address) ? ` on port ${port}` : "";
      return { ok: false, code: "OUTBOUND_BLOCKED", reason: `${what} a ${RANGE_NAMES[range] ?? range} address, which workflows may not call${elsewhere}` };
    }
  }
  return { ok: true, url, address: addresses[0], addresses };
}

/** Options of guardedFetch beyond RequestInit's. */
export interface GuardedFetchInit extends RequestInit {
  /** Time limit for the whole call (redirects and body included), default 30 s. */
  timeoutMs?: number;
  /** Redirects followed (each checked like the first URL), default 5; 0 follows none. */
  maxRedirects?: number;
  /** Largest body accepted, in bytes after decompression, default 10 MiB. */
  maxResponseBytes?: number;
  /** The allow-list and resolver; the process's own by default. */
  policy?: OutboundPolicy;
  /** Extra root certificates (PEM) to trust, besides the system's. */
  caCerts?: string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([204, 205, 304]);
/** Headers that carry credentials: not sent on to another origin by a redirect (as fetch does). */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie"];

async function bodyBytes(body: RequestInit["body"], headers: Headers): Promise<Uint8Array | null> {
  if (body === null || body === undefined) return null;
  const serialised = new Response(body);
  const type = serialised.headers.get("content-type");
  if (type && !headers.has("content-type")) headers.set("content-type", type);
  return new Uint8Array(await serialised.arrayBuffer());
}

/** Connects to each checked address in turn until one answers the connection. */
async function exchangeWithFallback(url: URL, addresses: string[], method: string, headers: Headers, body: Uint8Array | null, signal: AbortSignal, caCerts: string[] | undefined): Promise<PinnedResponse> {
  let lastError: unknown;
  for (const address of addresses) {
    try {
      return await exchange({ url, address, method, headers, body, signal, caCerts });
    } catch (error) {
      // Only a failure to connect moves on; anything after the request went out is final.
      if (signal.aborted || !(error instanceof OutboundError) || !error.beforeSending) throw error;
      lastError = error;
    }
  }
  throw lastError;
}

/** The body, decompressed when the server compressed it, counted against the cap. */
function cappedBody(response: PinnedResponse, maxBytes: number, url: URL, onDone: () => void, abort: (reason: OutboundError) => void): ReadableStream<Uint8Array> | null {
  if (response.body === null) {
    onDone();
    return null;
  }
  const encoding = response.headers.get("content-encoding")?.trim().toLowerCase();
  let source = response.body;
  if (encoding === "gzip" || encoding === "x-gzip" || encoding === "deflate") {
    source = source.pipeThrough(new DecompressionStream(encoding === "deflate" ? "deflate" : "gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
  }
  const reader = source.getReader();
  let received = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        onDone();
        throw error instanceof OutboundError || !(error instanceof Error) ? error : new OutboundError("OUTBOUND_PROTOCOL", `the response body from ${url.host} could not be read: ${error.message}`, { cause: error });
      }
      if (chunk.done) {
        onDone();
        controller.close();
        return;
      }
      received += chunk.value.length;
      if (received > maxBytes) {
        const error = new OutboundError("OUTBOUND_TOO_LARGE", `the response from ${url.host} is larger than ${maxBytes} bytes`);
        abort(error);
        onDone();
        throw error;
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      onDone();
      return reader.cancel(reason);
    },
  });
}

/**
 * `fetch` for URLs chosen by users, with the checks above. Resolves with the final response (a
 * redirect only when `redirect: "manual"`); its body streams, still under the time limit and the
 * size cap. Rejects with an OutboundError, or with the caller's signal's reason when it aborted.
 */
export async function guardedFetch(input: string | URL, init: GuardedFetchInit = {}): Promise<Response> {
  const policy = init.policy ?? defaultOutboundPolicy();
  const timeoutMs = init.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;
  const maxRedirects = init.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const maxBytes = init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const controller = new AbortController();
  const caller = init.signal ?? null;
  const onCallerAbort = () => controller.abort(caller?.reason);
  if (caller?.aborted) throw caller.reason;
  caller?.addEventListener("abort", onCallerAbort, { once: true });
  let current = String(input);
  const timer = setTimeout(() => controller.abort(new OutboundError("OUTBOUND_TIMEOUT", `no complete answer from ${hostOf(current)} within ${timeoutMs} ms`)), timeoutMs);
  let settled = false;
  const done = () => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    caller?.removeEventListener("abort", onCallerAbort);
  };

  try {
    let method = (init.method ?? "GET").toUpperCase();
    const headers = new Headers(init.headers);
    let body = await bodyBytes(init.body, headers);
    if (!headers.has("user-agent")) headers.set("user-agent", "orbita-workflows/1");
    if (!headers.has("accept")) headers.set("accept", "*/*");
    headers.set("accept-encoding", "gzip, deflate");
    for (let hop = 0; ; hop++) {
      const check = await Promise.race([checkOutboundUrl(current, policy), aborted(controller.signal)]);
      if (!check.ok) throw new OutboundError(check.code, hop === 0 ? check.reason : `a redirect to ${current.slice(0, 200)} was refused: ${check.reason}`);
      const response = await exchangeWithFallback(check.url, check.addresses, method, headers, body, controller.signal, init.caCerts);
      const location = response.headers.get("location");
      if (REDIRECTS.has(response.status) && location !== null && init.redirect !== "manual") {
        await response.body?.cancel();
        if (init.redirect === "error") throw new OutboundError("OUTBOUND_TOO_MANY_REDIRECTS", `${check.url.host} answered with a redirect, and redirects are not followed`);
        if (hop >= maxRedirects) throw new OutboundError("OUTBOUND_TOO_MANY_REDIRECTS", `more than ${maxRedirects} redirects, the last to ${location.slice(0, 200)}`);
        let next: URL;
        try {
          next = new URL(location, check.url);
        } catch {
          throw new OutboundError("OUTBOUND_PROTOCOL", `the redirect to "${location.slice(0, 200)}" is not a URL`);
        }
        if (response.status === 303 ? method !== "HEAD" : (response.status === 301 || response.status === 302) && method === "POST") {
          method = method === "HEAD" ? "HEAD" : "GET";
          body = null;
          headers.delete("content-type");
        }
        if (next.origin !== check.url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
        current = next.href;
        continue;
      }
      const length = response.headers.get("content-length");
      if (length !== null && Number(length) > maxBytes && !response.headers.has("content-encoding")) {
        await response.body?.cancel();
        throw new OutboundError("OUTBOUND_TOO_LARGE", `the response from ${check.url.host} is ${length} bytes, more than the ${maxBytes} allowed`);
      }
      const stream = cappedBody(response, maxBytes, check.url, done, (reason) => controller.abort(reason));
      if (NULL_BODY_STATUSES.has(response.status)) await stream?.cancel();
      try {
        return new Response(NULL_BODY_STATUSES.has(response.status) ? null : stream, { status: response.status, statusText: response.statusText, headers: response.headers });
      } catch (error) {
        await stream?.cancel();
        throw new OutboundError("OUTBOUND_PROTOCOL", `${check.url.host} answered with status ${response.status}, which is not a valid HTTP status`, { cause: error });
      }
    }
  } catch (error) {
    done();
    controller.abort(error);
    throw error;
  }
}

/** A promise that rejects with the signal's reason once it aborts (for racing steps without a signal of their own). */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url.slice(0, 200);
  }
}
