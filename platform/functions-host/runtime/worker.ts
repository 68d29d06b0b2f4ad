/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * Bootstrap of one function's worker (runs inside a Deno `Worker`, one per function).
 *
 * The function's module is imported unchanged. Before that, `Deno.serve` is replaced so the
 * handler the function registers is served over the worker's message channel instead of a port
 * (under the Supabase edge runtime the port is ignored too, and the main worker hands requests to
 * user workers in-process): the host posts each request and channel-server.ts answers it, keeping
 * streaming bodies, SSE and `Request.signal` as `Deno.serve` has them. A module that instead does
 * `export default { fetch }` is served the same way.
 */
import { ChannelServer } from "./channel-server.ts";
import type { BootMessage, ExchangeHostMessage, HostMessage, WorkerMessage } from "./protocol.ts";
import { workerErrorResponse } from "./responses.ts";

type Handler = Deno.ServeHandler;
type ServeOptions = Partial<Deno.ServeTcpOptions> & { handler?: Handler; fetch?: Handler };

let served: Deno.HttpServer | null = null;
let channel: ChannelServer | null = null;
let slug = "function";
let listen: BootMessage["listen"] = { hostname: "127.0.0.1", port: 0 };

function post(message: WorkerMessage, transfer: ArrayBuffer[] = []): void {
  self.postMessage(message, transfer);
}

/**
 * Serves the function's handler over the channel and tells the host it may send requests. The
 * server it returns stops taking requests on `shutdown()` (or the options' signal); once the open
 * ones are done the worker reports it has stopped serving, and the host replaces it.
 */
function startServing(handler: Handler, options: ServeOptions): Deno.HttpServer {
  const onError = options.onError ?? ((error: unknown) => {
    console.error(`Uncaught error in function "${slug}":`, error);
    return workerErrorResponse();
  });
  const remoteAddr: Deno.NetAddr = { transport: "tcp", hostname: listen.hostname, port: 0 };
  const server = new ChannelServer(handler, onError, remoteAddr, post);
  channel = server;
  const stopped = server.finished.then(() => post({ type: "fatal", message: "the function shut its server down" }));
  const shutdown = () => {
    server.close();
    return stopped;
  };
  options.signal?.addEventListener("abort", () => void shutdown(), { once: true });
  post({ type: "ready" });
  return {
    addr: { transport: "tcp", hostname: listen.hostname, port: listen.port },
    finished: stopped,
    shutdown,
    ref() {},
    unref() {},
    [Symbol.asyncDispose]: shutdown,
  };
}

/** Accepts every `Deno.serve` overload: (handler), (options, handler), ({handler, ...options}). */
function captureServe(...args: unknown[]): Deno.HttpServer {
  let handler: Handler | undefined;
  let options: ServeOptions = {};
  if (typeof args[0] === "function") {
    handler = args[0] as Handler;
  } else if (args[0] && typeof args[0] === "object") {
    options = args[0] as ServeOptions;
    handler = typeof args[1] === "function" ? (args[1] as Handler) : (options.handler ?? options.fetch);
  }
  if (!handler) throw new TypeError("Deno.serve needs a handler function");
  if (served) {
    // One server per function, as on the edge runtime; a second call gets the first server back.
    console.warn(`Function "${slug}" called Deno.serve more than once; only the first handler is served.`);
    return served;
  }
  served = startServing(handler, options);
  return served;
}

// Replacing the property is enough: the function reads `Deno.serve` at call time.
(Deno as { serve: unknown }).serve = captureServe;

/**
 * The edge runtime's `EdgeRuntime.waitUntil(promise)`: work that continues after the response.
 * The host counts these tasks so it does not stop the worker under them (up to the wall-clock
 * limit once the worker is retired).
 */
if (!("EdgeRuntime" in globalThis)) {
  Object.defineProperty(globalThis, "EdgeRuntime", {
    value: Object.freeze({
      waitUntil<T>(promise: Promise<T>): Promise<T> {
        post({ type: "background", delta: 1 });
        Promise.resolve(promise)
          .catch((error) => console.error(`Background task of function "${slug}" failed:`, error))
          .finally(() => post({ type: "background", delta: -1 }));
        return promise;
      },
    }),
    configurable: true,
  });
}

/**
 * Calls to the gateway leave from the functions host's own loopback address, the one the gateway
 * trusts to forward a client's address (a function passing on its visitor's X-Forwarded-For).
 * Every other call, and one that brings its own `client`, is left as it is.
 */
function routeGatewayCalls({ origin, localAddress }: BootMessage["egress"]): void {
  const client = Deno.createHttpClient({ localAddress });
  const direct = globalThis.fetch;
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit & { client?: Deno.HttpClient }) => {
    const url = input instanceof Request ? input.url : String(input);
    if (init?.client || !URL.canParse(url) || new URL(url).origin !== origin) return direct(input, init);
    return direct(input, { ...init, client });
  };
}

self.onmessage = (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  if (message.type === "boot") void boot(message);
  else channel?.receive(message as ExchangeHostMessage);
};

async function boot(message: BootMessage): Promise<void> {
  if (channel || served) return;
  slug = message.slug;
  listen = message.listen;
  routeGatewayCalls(message.egress);
  try {
    // A function may `await server.finished` at top level, so the import can stay pending for
    // ever after it has called Deno.serve: readiness is reported from captureServe, not here.
    const module = await import(message.entrypoint);
    if (served) return;
    const fetchHandler = module?.default?.fetch;
    if (typeof fetchHandler === "function") {
      served = startServing((request, info) => fetchHandler.call(module.default, request, info), {});
      return;
    }
    post({ type: "boot-error", message: `Function "${slug}" neither called Deno.serve nor has a default export with a fetch() method.` });
  } catch (error) {
    // The host logs these, with the stack, as the worker's one failure line.
    if (served) post({ type: "fatal", message: `failed after it started serving: ${errorText(error)}` });
    else post({ type: "boot-error", message: errorText(error) });
  }
}

// An uncaught error or unhandled rejection that the function does not handle itself (with an
// `error` or `unhandledrejection` listener calling preventDefault) ends the worker, as on the edge
// runtime; Deno reports it to the host's Worker.onerror. Deno.exit ends the worker without an
// error, so the host is told the code before it happens.
const exit = Deno.exit.bind(Deno);
(Deno as { exit: unknown }).exit = (code?: number): never => {
  post({ type: "exit", code: code ?? Deno.exitCode });
  return exit(code);
};

function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
