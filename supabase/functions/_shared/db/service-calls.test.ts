import { describe, expect, it } from "vitest";
import { HttpError } from "../http/errors.ts";
import { isConnectionError, isDatabaseUnavailable } from "./service-calls.ts";

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

describe("isDatabaseUnavailable", () => {
  it("recognises the 503 a service call throws for a lost connection, and nothing else", () => {
    expect(isDatabaseUnavailable(new HttpError(503, "DATABASE_UNAVAILABLE", "The database connection was lost; try again"))).toBe(true);
    for (const error of [new HttpError(500, "INTERNAL_ERROR", "boom"), new HttpError(409, "CONFLICT", "taken"), Object.assign(new Error("x"), { status: 503 }), { code: "57P01" }, undefined]) {
      expect(isDatabaseUnavailable(error)).toBe(false);
    }
  });
});
