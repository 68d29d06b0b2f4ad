/**
 * The local edge-functions host (runs under Deno; started by launch.ts). It plays the part of the
 * Supabase CLI's edge runtime "main service": requests arrive as `/<slug>/...` (the gateway has
 * stripped `/functions/v1`), verify_jwt is enforced per function, and each function runs in its
 * own worker (see runtime/pool.ts) so a throwing or hanging function cannot take the host down.
 */
import { HOST_CONFIG_VARIABLE, type HostConfig } from "./host-config.ts";
import { createJwtVerifier } from "./runtime/jwt.ts";
import { createLogger } from "../log/logger.ts";
import { ResponseFailed } from "./runtime/exchange.ts";
import { BootError, WorkerPool } from "./runtime/pool.ts";
import { Registry, type FunctionEntry } from "./runtime/registry.ts";
import { bootError, functionNotFound, invalidJwt, missingAuthorization, notBearer, wallClockExceeded, workerErrorResponse } from "./runtime/responses.ts";

/** Variables a function keeps from the host's own environment (the CLI's runtime has similar ones). */
const INHERITED = ["PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "DENO_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"];

function readConfig(): HostConfig {
  const raw = Deno.env.get(HOST_CONFIG_VARIABLE);
  if (!raw) throw new Error(`${HOST_CONFIG_VARIABLE} is not set: start the host through platform/functions-host/launch.ts`);
  return JSON.parse(raw) as HostConfig;
}

/**
 * Workers share the process environment, so it is made to be exactly what functions should see:
 * the stack's SUPABASE_* variables and supabase/functions/.env, nothing of the platform's own.
 */
function resetEnvironment(env: Record<string, string>): void {
  for (const name of Object.keys(Deno.env.toObject())) {
    if (!INHERITED.includes(name)) Deno.env.delete(name);
  }
  for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
  // Functions call the gateway (SUPABASE_URL) on loopback, which must never go through a configured proxy.
  for (const name of ["NO_PROXY", "no_proxy"]) {
    const current = Deno.env.get(name);
    if (current !== undefined || Deno.env.get("HTTP_PROXY") || Deno.env.get("http_proxy")) {
      Deno.env.set(name, [current, "127.0.0.1", "localhost"].filter(Boolean).join(","));
    }
  }
}

const config = readConfig();
resetEnvironment(config.env);

// Without reload (test and bench stacks) the functions found at start are served for good, so the
// sources are not walked again (a walk every 200 ms was 8% of the host's time under load).
const registry = new Registry(config.roots, config.reload ? undefined : Infinity);
const verifyJwt = createJwtVerifier(config.jwtSecret, config.publicKeys);
const limitOf = (entry: FunctionEntry) => entry.settings.wallClockMs ?? config.wallClockMs;
const log = createLogger("functions");
const pool = new WorkerPool(limitOf, config.idleMs, log, { origin: config.gatewayOrigin, localAddress: config.egressAddress }, { hostname: "127.0.0.1", port: config.port });

async function checkAuthorization(request: Request): Promise<Response | null> {
  const header = request.headers.get("authorization");
  if (!header) return missingAuthorization();
  const [scheme, token] = header.split(" ");
  if (scheme !== "Bearer" || !token) return notBearer();
  const result = await verifyJwt(token);
  return result.ok ? null : invalidJwt();
}

/** Settles with the promise, or rejects as soon as the signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * An answer the host makes instead of the function, logged with why, so no 5xx of the host's
 * goes unexplained (the gateway's request id ties the line to the client's report).
 */
function failed(entry: FunctionEntry, request: Request, [response, code]: [Response, string], reason: string): Response {
  log.warn("request failed", { function: entry.slug, status: response.status, code, reason, requestId: request.headers.get("x-request-id") });
  return response;
}

/**
 * Hands one request to the function's worker over its message channel (runtime/exchange.ts) under
 * the wall-clock limit, which runs until the response body has been sent, so it also covers a
 * response that streams for too long.
 */
async function invoke(entry: FunctionEntry, request: Request, url: URL): Promise<Response> {
  const limit = limitOf(entry);
  const worker = pool.acquire(entry);
  worker.begin();
  let settled = false;
  const controller = new AbortController();
  // Set from timer and event callbacks, so read through an object TypeScript does not narrow.
  const state: { outcome: "ok" | "timeout" | "died" | "client-gone"; reason: string } = { outcome: "ok", reason: "" };

  const timer = setTimeout(() => {
    state.outcome = "timeout";
    state.reason = `a request ran past the ${limit} ms wall-clock limit`;
    worker.exceeded(state.reason);
    controller.abort();
    finish();
  }, limit);
  const stopWatching = worker.onFailure((reason) => {
    if (state.outcome === "ok") {
      state.outcome = "died";
      state.reason = `the worker failed: ${reason}`;
    }
    controller.abort();
  });
  const onClientGone = () => {
    if (state.outcome === "ok") state.outcome = "client-gone";
    controller.abort();
  };
  request.signal.addEventListener("abort", onClientGone, { once: true });

  function finish(): void {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    stopWatching();
    request.signal.removeEventListener("abort", onClientGone);
    worker.end();
  }

  /** The host's answer when the request ends without the function's. */
  function givenUp(): Response {
    if (state.outcome === "timeout") return failed(entry, request, [wallClockExceeded(limit), "WORKER_LIMIT"], state.reason);
    if (state.outcome === "died") return failed(entry, request, [workerErrorResponse(), "WORKER_ERROR"], state.reason);
    // Only a client that went away gets here: nobody reads this answer.
    return workerErrorResponse();
  }

  // A worker already serving needs no wait (nor the promise and listener it costs).
  if (!worker.serving) {
    try {
      await untilAborted(worker.ready, controller.signal);
    } catch (error) {
      finish();
      if (state.outcome === "ok" && error instanceof BootError) return failed(entry, request, [bootError(), "BOOT_ERROR"], `the worker did not boot: ${error.message}`);
      return givenUp();
    }
  }
  if (controller.signal.aborted) {
    finish();
    return givenUp();
  }

  const exchange = worker.exchange(finish);
  controller.signal.addEventListener("abort", () => exchange.abort(controller.signal.reason), { once: true });
  try {
    return await exchange.send(request, url);
  } catch (error) {
    exchange.abort(error);
    if (state.outcome !== "ok") return givenUp();
    // The function answered nothing usable: its response body failed at once, or the client's upload broke.
    const reason = error instanceof ResponseFailed ? `the function's response failed: ${error.message}` : `the request body could not be read: ${String(error)}`;
    return failed(entry, request, [workerErrorResponse(), "WORKER_ERROR"], reason);
  }
}

async function handle(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === "/_internal/health") return Response.json({ ok: true });
  const slug = url.pathname.split("/")[1] ?? "";
  const { snapshot, changed } = registry.current();
  if (changed && config.reload) pool.retireAll("the function sources changed");
  const entry = snapshot.functions.get(slug);
  if (!entry) return functionNotFound();
  if (entry.settings.verifyJwt && request.method !== "OPTIONS") {
    const denied = await checkAuthorization(request);
    if (denied) return denied;
  }
  return invoke(entry, request, url);
}

const server = Deno.serve(
  {
    hostname: "127.0.0.1",
    port: config.port,
    onListen: ({ port }) => {
      const slugs = [...registry.current().snapshot.functions.keys()].sort();
      log.info("functions host listening", { port, functions: slugs, wallClockMs: config.wallClockMs });
    },
    onError: (error) => {
      log.error("host failed to answer a request", { error: String(error) });
      return new Response(JSON.stringify({ code: "Internal Server Error", message: "Request failed due to an internal server error" }), {
        status: 500,
        headers: { "content-type": "application/json" },
      });
    },
  },
  handle,
);

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, async () => {
    pool.close();
    // Open streams (SSE) would hold a graceful shutdown open; the stack's stop gives us 5 s.
    await Promise.race([server.shutdown(), new Promise((resolve) => setTimeout(resolve, 2_000))]);
    Deno.exit(0);
  });
}
