import { describe, expect, it } from "vitest";
import type { OutboundFetch } from "./services.ts";
import { tracedFetch } from "./traced-fetch.ts";

describe("tracedFetch", () => {
  const seen: Headers[] = [];
  const fetch: OutboundFetch = (_url, init) => {
    seen.push(new Headers(init?.headers));
    return Promise.resolve(new Response(null, { status: 204 }));
  };
  const trace = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01" };

  it("adds the block's traceparent to a request that has none", async () => {
    await tracedFetch(fetch, trace)("https://example.com", { headers: { accept: "application/json" } });
    expect(seen.at(-1)?.get("traceparent")).toBe(trace.traceparent);
    expect(seen.at(-1)?.get("accept")).toBe("application/json");
  });

  it("keeps a traceparent the request sets itself", async () => {
    await tracedFetch(fetch, trace)("https://example.com", { headers: { traceparent: "00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01" } });
    expect(seen.at(-1)?.get("traceparent")).toBe("00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01");
  });

  it("is the fetch itself when the run has no trace", () => {
    expect(tracedFetch(fetch, {})).toBe(fetch);
  });
});
