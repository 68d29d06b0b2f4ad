import { describe, expect, it } from "vitest";
import type { BlockHandler } from "../core/block-handler.ts";
import { flow, run } from "../../../../../test/helpers/workflows/flows.ts";

/** A Variables block replaced by one that streams the given pieces, as an agent does. */
function streaming(pieces: string[]): BlockHandler<unknown> {
  return {
    timeoutMs: () => 1_000,
    execute(blockRun) {
      for (const piece of pieces) blockRun.emitChunk(piece);
      return { content: pieces.join("") };
    },
  };
}

async function chunksOf(pieces: string[], env: Record<string, string>, input?: unknown): Promise<string[]> {
  const chunks: string[] = [];
  await run(flow().block("talk", "variables", { assignments: [] }, { name: "Talk" }).chain("start", "talk"), {
    env,
    ...(input === undefined ? {} : { trigger: { kind: "manual" as const, input } }),
    handlers: { variables: streaming(pieces) },
    onChunk: (_, chunk) => chunks.push(chunk),
  });
  return chunks;
}

describe("streamed chunks and secrets", () => {
  it("go out as they came when no chunk ends in the start of a secret", async () => {
    expect(await chunksOf(["Hello, ", "key sk-live-12345678 world"], { KEY: "sk-live-12345678" })).toEqual(["Hello, ", "key *** world"]);
  });

  it("hold back an end that may start a secret, so a secret split across chunks is masked whole", async () => {
    const chunks = await chunksOf(["it is sk-li", "ve-1234", "5678 and more"], { KEY: "sk-live-12345678" });
    expect(chunks.join("")).toBe("it is *** and more");
    expect(chunks[0]).toBe("it is ");
  });

  it("send what was held back when the block ends, even when it was only the start of a secret", async () => {
    expect((await chunksOf(["ends with sk-li"], { KEY: "sk-live-12345678" })).join("")).toBe("ends with sk-li");
  });

  it("never cut through a secret that repeats its own start", async () => {
    const chunks = await chunksOf(["x abcdabc", "d y"], { KEY: "abcdabcd" });
    expect(chunks.join("")).toBe("x *** y");
    expect(chunks.every((chunk) => !chunk.includes("abcd"))).toBe(true);
  });

  it("without secrets pass every chunk straight through", async () => {
    expect(await chunksOf(["a", "b", "c"], {})).toEqual(["a", "b", "c"]);
  });

  it("send an echo of the input that holds a secret whole and as typed, even split across chunks", async () => {
    const chunks = await chunksOf(["You said: is it sk-li", "ve-1234", "5678?", " Key: sk-live-12345678"], { KEY: "sk-live-12345678" }, { message: "is it sk-live-12345678?" });
    expect(chunks.join("")).toBe("You said: is it sk-live-12345678? Key: ***");
  });
});
