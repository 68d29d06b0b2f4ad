/** list-v2 and image transformations through storage-js against the running stack. */
import { randomUUID } from "node:crypto";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { serviceClient } from "../helpers/clients.ts";

const png = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: "#3366cc" } }).png().toBuffer();

describe("list-v2", () => {
  it("pages with a cursor and folds sub-folders into prefixes", async () => {
    const storage = serviceClient().storage;
    const bucket = `list-v2-${randomUUID().slice(0, 8)}`;
    expect((await storage.createBucket(bucket)).error).toBeNull();
    for (const name of ["a.txt", "b.txt", "c.txt", "docs/x.txt", "docs/y.txt", "img/z.txt"]) {
      expect((await storage.from(bucket).upload(name, "x")).error).toBeNull();
    }
    const first = await storage.from(bucket).listV2({ limit: 2, with_delimiter: true });
    expect(first.error).toBeNull();
    expect(first.data).toMatchObject({ hasNext: true, nextCursorKey: "b.txt" });
    expect(first.data!.objects.map((entry) => entry.name)).toEqual(["a.txt", "b.txt"]);
    const rest = await storage.from(bucket).listV2({ limit: 10, with_delimiter: true, cursor: first.data!.nextCursor });
    expect(rest.data!.hasNext).toBe(false);
    expect(rest.data!.objects.map((entry) => entry.name)).toEqual(["c.txt"]);
    expect(rest.data!.folders.map((entry) => entry.name)).toEqual(["docs/", "img/"]);
    const flat = await storage.from(bucket).listV2({ prefix: "docs/" });
    expect(flat.data!.objects.map((entry) => entry.name)).toEqual(["docs/x.txt", "docs/y.txt"]);
  });
});

describe("image transformations", () => {
  it("download, signed and public URLs render resized images; a non-image is refused with a 4xx", async () => {
    const storage = serviceClient().storage;
    const bucket = `images-${randomUUID().slice(0, 8)}`;
    expect((await storage.createBucket(bucket, { public: true })).error).toBeNull();
    expect((await storage.from(bucket).upload("photo.png", await png(400, 200), { contentType: "image/png" })).error).toBeNull();
    const downloaded = await storage.from(bucket).download("photo.png", { transform: { width: 100, height: 100, resize: "cover" } });
    expect(downloaded.error).toBeNull();
    const meta = await sharp(Buffer.from(await downloaded.data!.arrayBuffer())).metadata();
    expect([meta.width, meta.height, meta.format]).toEqual([100, 100, "png"]);

    const signed = await storage.from(bucket).createSignedUrl("photo.png", 60, { transform: { width: 50 } });
    expect(signed.data!.signedUrl).toContain("/render/image/sign/");
    const viaSigned = await sharp(Buffer.from(await (await fetch(signed.data!.signedUrl)).arrayBuffer())).metadata();
    expect([viaSigned.width, viaSigned.height, viaSigned.format]).toEqual([50, 25, "png"]);

    const { publicUrl } = storage.from(bucket).getPublicUrl("photo.png", { transform: { width: 40, height: 40, resize: "contain", quality: 50 } }).data;
    const viaPublic = await sharp(Buffer.from(await (await fetch(publicUrl)).arrayBuffer())).metadata();
    expect([viaPublic.width, viaPublic.height]).toEqual([40, 40]);

    expect((await storage.from(bucket).upload("notes.txt", "not an image")).error).toBeNull();
    const refused = await fetch(storage.from(bucket).getPublicUrl("notes.txt", { transform: { width: 10 } }).data.publicUrl);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ statusCode: "422", code: "InvalidRequest" });
  });

  it("a request without a token is refused with Storage's 'Invalid Compact JWS'", async () => {
    const response = await fetch(`${process.env.SUPABASE_URL}/storage/v1/object/list/anything`, { method: "POST", headers: { apikey: "" }, body: "{}" });
    expect(await response.json()).toMatchObject({ statusCode: "403", error: "Unauthorized", message: "Invalid Compact JWS" });
  });
});
