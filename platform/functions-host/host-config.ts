/**
 * What the Node launcher hands the Deno host (as JSON in ORBITA_FUNCTIONS_HOST_CONFIG, removed from
 * the environment before any function loads). Types only, so both runtimes can import it.
 */

/** Per-function settings from `[functions.<slug>]` in config.toml (and the test fixtures' file). */
export interface FunctionSettings {
  /** Default true, as in the CLI. */
  verifyJwt: boolean;
  /** Default true; a disabled function answers 404. */
  enabled: boolean;
  /** Absolute path of a non-default entrypoint (`entrypoint` key). */
  entrypoint?: string;
  /** Test fixtures only: a wall-clock limit for this function, in ms. */
  wallClockMs?: number;
}

/** A folder whose sub-folders are functions; earlier roots win a slug clash. */
export interface FunctionRoot {
  dir: string;
  /** Settings for slugs under this root; unlisted slugs get the defaults. */
  settings: Record<string, FunctionSettings>;
}

export interface HostConfig {
  port: number;
  jwtSecret: string;
  /** Public JWKs of the signing keys (`signing_keys_path`); verify_jwt accepts tokens they signed. */
  publicKeys: JsonWebKey[];
  roots: FunctionRoot[];
  /** Wall-clock limit per request (boot included), in ms. */
  wallClockMs: number;
  /** A worker with no request for this long is stopped (it boots again on the next one), in ms. */
  idleMs: number;
  /**
   * Replace workers when a source file changes, so edits apply on the next request (dev). The test
   * stack keeps its workers and the functions it found at start: code does not change during a
   * run, and a colleague saving a file must not recycle workers under a test that compares them.
   */
  reload: boolean;
  /** The environment every function sees, exactly (the host's own is cleared first). */
  env: Record<string, string>;
  /** Calls to this origin (the gateway, SUPABASE_URL) leave from `egressAddress`. */
  gatewayOrigin: string;
  egressAddress: string;
}

export const HOST_CONFIG_VARIABLE = "ORBITA_FUNCTIONS_HOST_CONFIG";

/**
 * The loopback address functions' calls to the gateway come from (Linux routes all of 127.0.0.0/8
 * to the loopback interface). The gateway trusts X-Forwarded-For from it, as Kong trusts the edge
 * runtime's network: a function that calls the API for an anonymous visitor passes on the address
 * the gateway gave it, so that visitor, not the functions host, is rate-limited.
 */
export const FUNCTIONS_EGRESS_ADDRESS = "127.0.0.2";
