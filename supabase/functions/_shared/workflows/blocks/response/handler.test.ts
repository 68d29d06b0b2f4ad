import { describe, expect, it } from "vitest";
import { responseHandler } from "./handler.ts";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";

describe("the Response block", () => {
  it("defaults to 200 with no headers and a null body", () => {
    expect(responseHandler.execute(testRun({}))).toEqual({ data: null, status: 200, headers: {} });
  });

  it("takes a status given as text and writes header values as text", () => {
    expect(responseHandler.execute(testRun({ status: "404", headers: { "X-Count": 3 as unknown as string }, body: { e: 1 } }))).toEqual({ data: { e: 1 }, status: 404, headers: { "X-Count": "3" } });
  });

  it("refuses statuses outside 100-599", () => {
    expect(() => responseHandler.execute(testRun({ status: 99 }))).toThrow("from 100 to 599");
    expect(() => responseHandler.execute(testRun({ status: "ok" }))).toThrow("from 100 to 599");
  });
});
