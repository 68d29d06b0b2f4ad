import { describe, expect, it } from "vitest";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import { chatTriggerHandler } from "./handler.ts";

describe("the chat trigger", () => {
  it("reads the message, the conversation and its earlier turns", () => {
    const history = [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello!" }, { role: "system", content: "dropped" }, "junk"];
    const run = testRun({}, { trigger: { kind: "chat", input: { message: "Any news?", conversationId: "c-1", history } } });
    expect(chatTriggerHandler.execute(run)).toEqual({
      message: "Any news?",
      conversationId: "c-1",
      history: [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello!" }],
    });
  });

  it("gives a manual run without a message an empty one, in a conversation of its own", () => {
    expect(chatTriggerHandler.execute(testRun({}, { trigger: { kind: "manual" } }))).toEqual({ message: "", conversationId: "run-1", history: [] });
  });
});
