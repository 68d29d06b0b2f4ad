/**
 * The gateway's credential: a random secret made when a stack starts, which the gateway's public
 * half (HAProxy) adds to every request it sends to the internal services it fronts (postgres-meta
 * and the node half: auth, storage, the token verifier), and which those services demand. Without
 * it, anything on the machine that can open a loopback port — a workflow's API block on a stack
 * whose allow-list opens loopback — reaches them as the gateway does, past its key checks and
 * rate limits: pg-meta runs any SQL as `postgres`. Only the gateway, and the processes the stack
 * started, read it: a file in the stack's folder, readable by its owner only.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { StackConfig } from "../config/stack-config.ts";

/** The request header carrying the credential; the gateway sets it, overwriting any a client sent. */
export const GATEWAY_CREDENTIAL_HEADER = "x-orbita-gateway-credential";

/** The environment variable that hands the credential to the processes that are not TypeScript of ours (HAProxy, pg-meta). */
export const GATEWAY_CREDENTIAL_VARIABLE = "ORBITA_GATEWAY_CREDENTIAL";

function credentialFile(config: StackConfig): string {
  return join(config.runtimeDir, "gateway", "credential");
}

/** Makes a fresh credential for a stack that is starting; a restarted service reads the same one. */
export function createGatewayCredential(config: StackConfig): string {
  const credential = randomBytes(32).toString("hex");
  const file = credentialFile(config);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, credential, { mode: 0o600 });
  // writeFileSync's mode applies only to a file it creates; one left by an earlier start keeps its own.
  chmodSync(file, 0o600);
  return credential;
}

/** The running stack's credential (for its services, and for tests that call an internal port on purpose). */
export function readGatewayCredential(config: StackConfig): string {
  return readFileSync(credentialFile(config), "utf8").trim();
}

/** Whether a request's header value is the credential, compared in constant time. */
export function carriesGatewayCredential(value: string | string[] | undefined, credential: string): boolean {
  if (typeof value !== "string" || credential === "") return false;
  const given = Buffer.from(value);
  const expected = Buffer.from(credential);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
