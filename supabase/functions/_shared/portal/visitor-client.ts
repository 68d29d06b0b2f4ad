import { postgrestRpc, type Rpc } from "../db/rpc.ts";
import { createAnonClient } from "../db/supabase-clients.ts";
import { HttpError } from "../http/errors.ts";

/**
 * The approval page's way into the data API for one visitor. It calls as an anonymous client (the
 * approval functions are granted to anon; the token authorises), and every call carries the
 * visitor's address in X-Forwarded-For, so the gateway counts it against that visitor's budget,
 * not the functions host's (the local gateway trusts the header from the functions host only;
 * hosted Supabase sets and ignores it itself).
 */
export interface Visitor {
  /**
   * Calls `public.<fn>(args)` and returns its result. When the gateway refuses the call for the
   * visitor's rate limit, throws HttpError 429 `rate_limited` carrying the gateway's Retry-After
   * (the approve-proposal page of that code); any other failure is an Error (an outage).
   */
  call: Rpc;
}

/** Retry-After when a 429 carries none: the gateway's windows are one minute long. */
const DEFAULT_RETRY_AFTER_SECONDS = "60";

/** A Visitor acting for the client at `address` (null when the gateway named none). */
export function createVisitor(address: string | null): Visitor {
  // supabase-js reports a refused call's status but not its headers; the fetch it is given keeps them.
  let retryAfter: string | null = null;
  const visitorFetch: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (address) headers.set("x-forwarded-for", address);
    const response = await fetch(input, { ...init, headers });
    if (response.status === 429) retryAfter = response.headers.get("retry-after");
    return response;
  };
  const client = createAnonClient(visitorFetch);
  return {
    async call(fn, args) {
      const { data, error, status } = await postgrestRpc(client, fn, args);
      if (status === 429) {
        throw new HttpError(429, "rate_limited", `${fn} was refused for the visitor's rate limit`, undefined, {
          "retry-after": retryAfter && /^\d+$/.test(retryAfter) ? retryAfter : DEFAULT_RETRY_AFTER_SECONDS,
        });
      }
      if (error) throw new Error(`${fn} failed: ${error.code} ${error.message}`);
      return data;
    },
  };
}
