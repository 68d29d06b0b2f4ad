import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { address, MailStore, uuidv7 } from "./store.ts";

describe("mail store", () => {
  it("makes ids that sort by creation, even within one millisecond", () => {
    const ids = Array.from({ length: 500 }, () => uuidv7());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("reads the bare address out of a display name", () => {
    expect(address("Ana Souza <Ana@Example.test>")).toBe("ana@example.test");
    expect(address(" ana@example.test ")).toBe("ana@example.test");
  });

  it("stores messages with attachment bytes, lists newest first, filters by recipient and clears", async () => {
    const store = new MailStore(mkdtempSync(join(tmpdir(), "orbita-mail-")));
    const first = await store.save({
      body: { from: "a@x.test", to: "Bob <bob@x.test>", subject: "one", text: "1" },
      attachments: [{ filename: "a.bin", content_type: "application/octet-stream", bytes: Buffer.from([1, 2, 3]) }],
    });
    const second = await store.save({ body: { from: "a@x.test", to: ["carol@x.test"], subject: "two", html: "<p>2</p>" }, attachments: [] });

    expect((await store.list({})).map((message) => message.id)).toEqual([second, first]);
    expect((await store.list({ to: "BOB@x.test" })).map((message) => message.id)).toEqual([first]);
    expect((await store.get(first))?.attachments).toEqual([{ index: 0, filename: "a.bin", content_type: "application/octet-stream", size: 3 }]);
    expect([...((await store.attachment(first, 0))?.bytes ?? [])]).toEqual([1, 2, 3]);
    expect(await store.attachment(first, 1)).toBeNull();
    expect(await store.clear()).toBe(2);
    expect(await store.list({})).toEqual([]);
  });
});
