/**
 * The workflow-files bucket through supabase-js storage: the runtime (service role) stores a run's
 * files; nobody else reads or writes them, except through a signed URL.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "../helpers/clients.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits } from "./logs-helpers.ts";

describe("the workflow-files bucket", () => {
  let workspace: TestWorkspace;
  let path: string;

  beforeAll(async () => {
    workspace = await createWorkspace("Files");
    // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
    await liftLimits(workspace.id);
    path = `${workspace.id}/${randomUUID()}/${randomUUID()}/invoice.txt`;
    const stored = await serviceClient().storage.from("workflow-files").upload(path, "total: 42", { contentType: "text/plain" });
    expect(stored.error).toBeNull();
  });

  it("is private, with files of at most 20 MB", async () => {
    const { data } = await serviceClient().storage.getBucket("workflow-files");
    expect(data).toMatchObject({ public: false, file_size_limit: 20 * 1024 * 1024 });
  });

  it("serves a run's file through a signed URL", async () => {
    const signed = await serviceClient().storage.from("workflow-files").createSignedUrl(path, 300);
    expect(signed.error).toBeNull();
    const response = await fetch(signed.data!.signedUrl);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("total: 42");
  });

  it("lets no user read or write files directly, not even the workspace's owner", async () => {
    const bucket = workspace.owner.client.storage.from("workflow-files");
    const download = await bucket.download(path);
    expect(download.error).toMatchObject({ statusCode: "404" });
    const upload = await bucket.upload(`${workspace.id}/forged.txt`, "x");
    expect(upload.error).toMatchObject({ statusCode: "403" });
    const signed = await bucket.createSignedUrl(path, 60);
    expect(signed.error).toMatchObject({ statusCode: "404" });
  });
});
