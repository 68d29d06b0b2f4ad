import { describe, expect, it } from "vitest";
import { decodeBase64, safeObjectName, storageFileStore, type FileBackend } from "./storage-files.ts";

function memoryBackend() {
  const objects = new Map<string, { bytes: Uint8Array; contentType: string }>();
  const backend: FileBackend = {
    upload: (path, bytes, contentType) => {
      objects.set(path, { bytes, contentType });
      return Promise.resolve();
    },
    sign: (path, seconds) => Promise.resolve(`https://files.test/${path}?expires=${seconds}`),
  };
  return { objects, backend };
}

const target = { workspaceId: "ws", workflowId: "wf", executionId: "run" };

describe("the storage file store", () => {
  it("stores inline files and hands out UserFiles with a 5-minute signed URL", async () => {
    const { objects, backend } = memoryBackend();
    const store = storageFileStore(target, backend, () => Date.parse("2026-01-01T00:00:00Z"));
    const file = await store.store({ type: "file", data: `data:text/plain;base64,${btoa("hello")}`, name: "hi there.txt" }, { executionId: "run", field: "docs" });
    expect(file).toEqual({
      id: expect.stringMatching(/^file_/), name: "hi there.txt", url: "https://files.test/ws/wf/run/1-hi_there.txt?expires=300", size: 5, type: "text/plain",
      key: "ws/wf/run/1-hi_there.txt", uploadedAt: "2026-01-01T00:00:00.000Z", expiresAt: "2026-01-01T00:05:00.000Z",
    });
    expect(new TextDecoder().decode(objects.get("ws/wf/run/1-hi_there.txt")?.bytes)).toBe("hello");
    expect(store.files).toEqual([file]);
  });

  it("passes URL entries through without uploading, without uploadedAt and expiresAt", async () => {
    const { objects, backend } = memoryBackend();
    const store = storageFileStore(target, backend);
    const file = await store.store({ type: "url", data: "https://example.test/a.pdf", name: "a.pdf", mime: "application/pdf" }, { executionId: "run", field: "docs" });
    expect(file).toMatchObject({ name: "a.pdf", url: "https://example.test/a.pdf", size: 0, type: "application/pdf", key: "url/a.pdf" });
    expect(file).not.toHaveProperty("uploadedAt");
    expect(file).not.toHaveProperty("expiresAt");
    expect(objects.size).toBe(0);
  });

  it("keeps object names to characters every Storage accepts", () => {
    expect(safeObjectName("../../etc/pässwd")).toBe("etc_pa_sswd");
    expect(safeObjectName("")).toBe("file");
    expect(decodeBase64(btoa("\u0000\u00ff"))).toEqual(new Uint8Array([0, 255]));
  });
});
