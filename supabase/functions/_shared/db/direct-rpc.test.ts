import { describe, expect, it } from "vitest";
import { isClosedConnectionWrite, isLostConnectionRejection } from "./direct-rpc.ts";

/** The error postgres.js 3.4.9's nextWrite throws once its socket is gone. */
function closedWrite(): TypeError {
  const socket = null as unknown as { write(chunk: string): void };
  function nextWrite() {
    socket.write("x");
  }
  try {
    nextWrite();
  } catch (error) {
    return error as TypeError;
  }
  throw new Error("unreachable");
}

describe("the closed-connection write guard", () => {
  it("recognises exactly postgres.js's nextWrite on a closed socket", () => {
    expect(isClosedConnectionWrite(closedWrite())).toBe(true);
  });

  it("leaves every other error alone", () => {
    expect(isClosedConnectionWrite(new TypeError("Cannot read properties of null (reading 'write')"))).toBe(false);
    expect(isClosedConnectionWrite(new TypeError("Cannot read properties of null (reading 'end')"))).toBe(false);
    expect(isClosedConnectionWrite(new Error("Cannot read properties of null (reading 'write')"))).toBe(false);
    expect(isClosedConnectionWrite("nextWrite")).toBe(false);
  });
});

describe("the lost-connection rejection guard", () => {
  const withStack = (error: Error & { code?: string }, stack: string) => Object.assign(error, { stack: `${error.name}: ${error.message}\n${stack}` });

  it("recognises postgres.js's lost connections and resets of its sockets", () => {
    expect(isLostConnectionRejection(withStack(Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" }), "    at file:///app/node_modules/postgres/src/connection.js:453:57"))).toBe(true);
    expect(isLostConnectionRejection(withStack(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), "    at TCPWrap.onStreamRead (ext:deno_node/internal/stream_base_commons.ts:1:3690)"))).toBe(true);
  });

  it("leaves the same codes from anywhere else alone", () => {
    expect(isLostConnectionRejection(withStack(Object.assign(new Error("closed"), { code: "CONNECTION_CLOSED" }), "    at file:///app/other.js:1:1"))).toBe(false);
    expect(isLostConnectionRejection(withStack(Object.assign(new Error("reset"), { code: "ECONNRESET" }), "    at fetch (ext:deno_fetch/26_fetch.js:1:1)"))).toBe(false);
    expect(isLostConnectionRejection(new TypeError("x"))).toBe(false);
    expect(isLostConnectionRejection(null)).toBe(false);
  });
});
