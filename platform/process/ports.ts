import { createConnection, createServer } from "node:net";
import { PlatformError } from "./errors.ts";

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isListening(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Fails with a clear line when the port cannot be bound (taken by another program). */
export async function assertPortFree(port: number, what: string): Promise<void> {
  const free = await new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
  if (!free) {
    throw new PlatformError(
      `Port ${port} (${what}) is already in use by another program.`,
      `Stop that program (see \`ss -ltnp 'sport = :${port}'\`) or run \`npm stop\` if it is an earlier Orbita stack.`,
    );
  }
}

/** Polls until the port accepts connections or the timeout passes. */
export async function waitForPort(port: number, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await isListening(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new PlatformError(`${what} did not start listening on port ${port} within ${timeoutMs / 1000} s.`, "Check its log in .orbita/<profile>/logs/.");
}
