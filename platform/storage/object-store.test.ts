import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StorageFailure } from "./errors.ts";
import { ObjectStore } from "./object-store.ts";

const root = mkdtempSync(join(tmpdir(), "object-store-"));

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const tooLarge = { bytes: 4, failure: () => new StorageFailure("EntityTooLarge", 413, "too large") };

describe("ObjectStore.stage", () => {
  it("leaves no staging file behind when a body is refused on its first chunk, even while the file is still being opened", async () => {
    const store = new ObjectStore(root);
    await store.init();
    // The refusal races the asynchronous open of the staging file; many tries make a lost race show.
    for (let attempt = 0; attempt < 200; attempt += 1) {
      await expect(store.stage(new Blob(["more than four bytes"]).stream(), tooLarge)).rejects.toBeInstanceOf(StorageFailure);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readdirSync(join(root, "tmp"))).toEqual([]);
  });

  it("keeps the bytes of a body within the limit in one staging file", async () => {
    const store = new ObjectStore(root);
    await store.init();
    const staged = await store.stage(new Blob(["four"]).stream(), tooLarge);
    expect(staged.size).toBe(4);
    expect(readdirSync(join(root, "tmp"))).toHaveLength(1);
    await store.discard(staged);
    expect(readdirSync(join(root, "tmp"))).toEqual([]);
  });
});
