import { describe, expect, it } from "vitest";
import { HttpError, type Problem, toHttpError } from "./errors.ts";

const words = { describe: (problem: Problem) => new HttpError(500, `words_${problem.kind}`, "said in the service's words") };

describe("HttpError", () => {
  it("carries a status, a code, a message, details and headers", () => {
    const error = new HttpError(405, "method_not_allowed", "Use POST", { allowed: ["POST"] }, { Allow: "POST" });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ status: 405, code: "method_not_allowed", message: "Use POST", details: { allowed: ["POST"] }, headers: { Allow: "POST" } });
    expect(new HttpError(400, "x", "y").headers).toEqual({});
  });
});

describe("toHttpError", () => {
  it("keeps an HttpError as it is", () => {
    const error = new HttpError(409, "conflict", "Already done");
    expect(toHttpError(error, words)).toBe(error);
  });

  it("turns anything else into the service's internal error, never exposing it", () => {
    for (const thrown of [new Error("connection refused at 10.0.0.3"), "a string", null]) {
      const error = toHttpError(thrown, words);
      expect(error).toMatchObject({ status: 500, code: "words_internal" });
      expect(error.message).not.toContain("10.0.0.3");
    }
  });
});
