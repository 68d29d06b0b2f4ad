/**
 * Entry point of a sandbox worker thread under Deno (a Web Worker started by sandbox-pool.ts): the
 * worker's global scope is the port the pool talks to.
 */
import { serveSandboxThread, type SandboxThreadPort } from "./sandbox-thread.ts";

serveSandboxThread(globalThis as unknown as SandboxThreadPort);
