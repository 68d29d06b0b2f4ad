import { describe, expect, it } from "vitest";
import type { BlockHandler } from "../core/block-handler.ts";
import { flow, run } from "../../../../../test/helpers/workflows/flows.ts";

/** A Variables block replaced by one that streams its output in pieces, as an agent does. */
const streaming: BlockHandler<unknown> = {
  timeoutMs: () => 1_000,
  execute(blockRun) {
    blockRun.emitChunk("Hello, ");
    blockRun.emitChunk("key sk-live-12345678 world");
    return { content: "done" };
  },
};

describe("streamed chunks", () => {
  it("reach onChunk with the producing block's id and secrets masked", async () => {
    const chunks: [string, string][] = [];
    const result = await run(flow().block("talk", "variables", { assignments: [] }, { name: "Talk" }).chain("start", "talk"), {
      env: { KEY: "sk-live-12345678" },
      handlers: { variables: streaming },
      onChunk: (blockId, chunk) => chunks.push([blockId, chunk]),
    });
    expect(result.success).toBe(true);
    expect(chunks).toEqual([["talk", "Hello, "], ["talk", "key *** world"]]);
  });

  it("are a no-op without a listener, and a throwing listener does not fail the block", async () => {
    const builder = () => flow().block("talk", "variables", { assignments: [] }, { name: "Talk" }).chain("start", "talk");
    expect((await run(builder(), { handlers: { variables: streaming } })).success).toBe(true);
    const thrown = await run(builder(), { handlers: { variables: streaming }, onChunk: () => { throw new Error("listener broke"); } });
    expect(thrown.success).toBe(true);
  });
});
