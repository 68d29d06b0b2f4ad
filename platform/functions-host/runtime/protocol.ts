/** Messages between the host and a function's worker. */

/** Host → worker: import and serve this function. */
export interface BootMessage {
  type: "boot";
  slug: string;
  /** file:// URL of the function's entrypoint. */
  entrypoint: string;
  /** The function's calls to the gateway leave from this loopback address (see host-config.ts). */
  egress: { origin: string; localAddress: string };
}

/** Worker → host. */
export type WorkerMessage =
  /** The function's handler is served on 127.0.0.1:port. */
  | { type: "ready"; port: number }
  /** The module failed to load or registered no handler. */
  | { type: "boot-error"; message: string }
  /** The module failed after it had started serving (a top-level await rejected later); with its stack. */
  | { type: "fatal"; message: string }
  /** The function called Deno.exit. */
  | { type: "exit"; code: number }
  /** An EdgeRuntime.waitUntil task started (+1) or settled (-1). */
  | { type: "background"; delta: 1 | -1 };
