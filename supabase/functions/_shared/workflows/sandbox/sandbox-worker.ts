/**
 * Entry point of a sandbox worker thread under Deno (a Web Worker sandbox-threads.ts starts for the
 * pool): the worker's global scope is the port the pool talks to.
 */
import { serveSandboxThread, type SandboxThreadPort } from "./sandbox-thread.ts";

serveSandboxThread(globalThis as unknown as SandboxThreadPort);
