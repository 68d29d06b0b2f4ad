import { describe, expect, it } from "vitest";
import { isConnectionError } from "./service-calls.ts";

describe("isConnectionError", () => {
  it("counts a lost, refused or never-opened connection as one", () => {
    for (const code of ["CONNECTION_CLOSED", "CONNECT_TIMEOUT", "ECONNREFUSED", "53300", "57P01", "57P03"]) {
      expect(isConnectionError(Object.assign(new Error(code), { code }))).toBe(true);
    }
  });

  it("leaves a fault of the call itself (a constraint, a raised error, no code at all) alone", () => {
    for (const error of [{ code: "23505" }, { code: "P0001" }, { code: "55000" }, new Error("plain"), undefined, null]) {
      expect(isConnectionError(error)).toBe(false);
    }
  });
});
