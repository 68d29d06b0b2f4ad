import { describe, expect, it } from "vitest";
import { backoffSeconds, type ClaimedExport, messageOutcomes } from "./export-worker.ts";

const item = (messageId: number, attempt: number) => ({ messageId, attempt }) as ClaimedExport;

describe("backoffSeconds", () => {
  it("waits 1, 2, 4... seconds, at most a minute", () => {
    expect([1, 2, 3, 4, 10].map(backoffSeconds)).toEqual([1, 2, 4, 8, 60]);
  });
});

describe("messageOutcomes", () => {
  it("deletes exported runs", () => {
    expect(messageOutcomes([item(1, 1)], "delivered", 4)).toEqual([{ messageId: 1, outcome: "exported" }]);
  });
  it("retries a collector that is down until a run's last attempt, then drops it", () => {
    expect(messageOutcomes([item(1, 1), item(2, 4)], "retryable", 4)).toEqual([
      { messageId: 1, outcome: "retry", retryInSeconds: 1 },
      { messageId: 2, outcome: "dropped" },
    ]);
  });
  it("drops at once what the collector refused for good", () => {
    expect(messageOutcomes([item(1, 1)], "final", 4)).toEqual([{ messageId: 1, outcome: "dropped" }]);
  });
});
