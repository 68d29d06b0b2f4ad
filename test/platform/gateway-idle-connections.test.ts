import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { GATEWAY_CREDENTIAL_HEADER, readGatewayCredential } from "../../platform/gateway/internal-credential.ts";

// The gateway's public half (HAProxy) reuses its idle connections to the node half (auth and
// storage) for later requests. Node used to close a connection after 5 s idle, and a request HAProxy
// handed one in that moment failed with a 502 ("The auth service is not reachable"): a rare CI
// failure of whichever test signed a user in at that instant. The race cannot be forced from
// outside; what removes it is that the node half never closes an idle connection itself, which
// this checks on a connection of its own.
const IDLE_MS = 6_500;

/** Sends one HTTP/1.1 request on `socket` and resolves with the status line of its answer. */
function request(socket: Socket, path: string): Promise<string> {
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
    // As the public half sends it, credential included (the node half refuses requests without it).
    socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-orbita-service: auth\r\n${GATEWAY_CREDENTIAL_HEADER}: ${readGatewayCredential(loadConfig("test"))}\r\n\r\n`);
  });
}

describe("API gateway: connections to the node half", () => {
  it("stay open while idle, so the gateway never reuses one that is being closed", async () => {
    const socket = connect(loadConfig("test").ports.gatewayInner, "127.0.0.1");
    let closedAt: number | null = null;
    socket.once("close", () => { closedAt = Date.now(); });
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    try {
      expect(await request(socket, "/health")).toMatch(/^HTTP\/1\.1 200/);
      const idleSince = Date.now();
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      expect(closedAt === null ? "open" : `closed after ${closedAt - idleSince} ms idle`).toBe("open");
      expect(await request(socket, "/health")).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      socket.destroy();
    }
  }, 30_000);
});
