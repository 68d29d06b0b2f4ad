import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { GATEWAY_CREDENTIAL_HEADER, readGatewayCredential } from "../../platform/gateway/internal-credential.ts";
import { env } from "../helpers/env.ts";

// The gateway's public half (HAProxy) reuses its idle connections to the node half (auth and
// storage) for later requests. Node used to close a connection after 5 s idle, and a request HAProxy
// handed one in that moment failed with a 502 ("The auth service is not reachable"): a rare CI
// failure of whichever test signed a user in at that instant. The race cannot be forced from
// outside; what removes it is that the node half never closes an idle connection itself, which
// this checks on a connection of its own.
const IDLE_MS = 6_500;

/** Sends one HTTP/1.1 request on `socket` and resolves with the status line of its answer. */
function request(socket: Socket, path: string, head = innerHead): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = "";
    const onData = (chunk: Buffer) => {
      received += chunk.toString("latin1");
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received.slice(0, end))?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      socket.off("data", onData);
      resolve(received.slice(0, received.indexOf("\r\n")));
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${head()}\r\n`);
  });
}

/** The head lines the public half adds, credential included (the node half refuses requests without it). */
function innerHead(): string {
  return `x-orbita-service: auth\r\n${GATEWAY_CREDENTIAL_HEADER}: ${readGatewayCredential(loadConfig("test"))}\r\n`;
}

/** Opens a connection to `port`, sends `path`, idles IDLE_MS, and says whether it is still open and answers again. */
async function answersAfterIdle(port: number, path: string, head?: () => string): Promise<{ idle: string; again: string }> {
  const socket = connect(port, "127.0.0.1");
  let closedAt: number | null = null;
  socket.once("close", () => { closedAt = Date.now(); });
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  try {
    expect(await request(socket, path, head)).toMatch(/^HTTP\/1\.1 200/);
    const idleSince = Date.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idle = closedAt === null ? "open" : `closed after ${closedAt - idleSince} ms idle`;
    return { idle, again: idle === "open" ? (await request(socket, path, head)).slice(0, 12) : "" };
  } finally {
    socket.destroy();
  }
}

describe("API gateway: connections to the node half", () => {
  it("stay open while idle, so the gateway never reuses one that is being closed", async () => {
    expect(await answersAfterIdle(loadConfig("test").ports.gatewayInner, "/health")).toEqual({ idle: "open", again: "HTTP/1.1 200" });
  }, 30_000);
});

// The same race one hop out: Node's fetch keeps an idle connection 4 s, and a busy client's late
// timer could send a request (a large upload, often, whose body took seconds to build) on one the
// gateway had closed at 5 s, failing with EPIPE. The gateway keeps idle clients far longer.
describe("API gateway: client connections", () => {
  it("stay open while idle longer than Node's fetch keeps them", async () => {
    expect(await answersAfterIdle(loadConfig("test").ports.gateway, "/auth/v1/health", () => `apikey: ${env.anonKey}\r\n`)).toEqual({ idle: "open", again: "HTTP/1.1 200" });
  }, 30_000);
});
