/**
 * A small closed-loop HTTP load generator: `concurrency` workers send the prepared requests one
 * after another over kept-alive connections and record each latency, so the figures include
 * everything a client sees (gateway, edge function, Postgres). It uses node:http rather than
 * fetch: the client shares the machine's two cores with the stack, and fetch costs it about
 * three times as much CPU per request.
 */
import { Agent, request as httpRequest } from "node:http";
import { percentile } from "../bench-support.ts";

/** One prepared request. */
export interface PreparedRequest {
  method: "GET" | "POST";
  url: string;
  token: string;
  /** The project key, for requests to the data API (the gateway requires it there). */
  apikey?: string;
  /** Any other headers (a workflow API key, an execution mode). */
  headers?: Record<string, string>;
  body?: unknown;
}

/** What a run measured. */
export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  statuses: Record<string, number>;
  p50: number;
  p95: number;
  p99: number;
}

/** Sends one request and resolves with its status once the whole answer has arrived. */
function send(request: PreparedRequest, agent: Agent): Promise<number> {
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  const headers: Record<string, string> = { Authorization: `Bearer ${request.token}`, ...request.headers };
  if (request.apikey) headers.apikey = request.apikey;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    headers["Content-Length"] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(request.url, { method: request.method, headers, agent }, (response) => {
      response.on("data", () => {});
      response.on("end", () => resolve(response.statusCode ?? 0));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** Sends every request with `concurrency` in flight and summarises latency (ms) and throughput. */
export async function runLoad(requests: PreparedRequest[], concurrency: number): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests.length) {
      const request = requests[next];
      next += 1;
      const sent = performance.now();
      const status = await send(request, agent);
      latencies.push(performance.now() - sent);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: requests.length,
    seconds,
    perSecond: requests.length / seconds,
    statuses,
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    p99: percentile(latencies, 0.99),
  };
}

/** The median of several runs of the same load, by throughput: alternating rounds leave noise to both sides. */
export function medianRun(results: readonly LoadResult[]): LoadResult {
  return [...results].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(results.length / 2)];
}

/** "1234/s, p50 3.1 ms, p95 7.9 ms, p99 12.0 ms, statuses {200: 1000}". */
export function describeLoad(result: LoadResult): string {
  const statuses = Object.entries(result.statuses).map(([status, count]) => `${status}: ${count}`).join(", ");
  return `${result.perSecond.toFixed(0)}/s over ${result.seconds.toFixed(1)} s, p50 ${result.p50.toFixed(1)} ms, p95 ${result.p95.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms (${statuses})`;
}
