/**
 * An outbound fetch that carries a block's trace context (docs/tracing.md): every request it sends
 * gets the `traceparent` (and `tracestate`) headers naming the block's span, unless the request
 * sets them itself. The model providers and the vector store send through it, so their calls join
 * the run's trace as the HTTP block's do.
 */
import type { OutboundFetch } from "./services.ts";

/** `fetch` with `traceHeaders` added to each request that does not set them; `fetch` itself when there are none. */
export function tracedFetch(fetch: OutboundFetch, traceHeaders: Record<string, string>): OutboundFetch {
  if (Object.keys(traceHeaders).length === 0) return fetch;
  return (url, init = {}) => {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(traceHeaders)) if (!headers.has(name)) headers.set(name, value);
    return fetch(url, { ...init, headers });
  };
}
