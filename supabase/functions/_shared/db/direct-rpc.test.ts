import { describe, expect, it } from "vitest";
import { isClosedConnectionWrite } from "./direct-rpc.ts";

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
