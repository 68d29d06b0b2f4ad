import { createClient, type RealtimeClientOptions, type SupabaseClient } from "@supabase/supabase-js";
import { SignJWT } from "jose";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { anonClient, createTestUser, serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

// Buckets and policies come from test/fixtures/storage-policies.sql: in test-private and
// test-public a user may write, read and delete only under a folder named after their uid;
// test-limited takes at most 1024 bytes of text/plain or image/*.

const clientOptions = {
  auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  // Node 20 has no global WebSocket; supabase-js needs one for its realtime transport.
  realtime: { transport: WebSocket as unknown as RealtimeClientOptions["transport"] },
};
const db = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
const storageDir = loadConfig("test").storageDir;
const jwtKey = new TextEncoder().encode(env.jwtSecret);

/** Signs an access token the way the auth service does (HS256, Supabase's claims), e.g. an expired one. */
async function mintAccessToken(sub: string, expiresInSeconds = 3600): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub, role: "authenticated", aud: "authenticated", email: `${sub}@example.test`, is_anonymous: false })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + expiresInSeconds)
    .sign(jwtKey);
}

/** A client whose every storage request carries the given bearer token. */
function clientWithToken(token: string): SupabaseClient {
  return createClient(env.url, env.anonKey, { ...clientOptions, accessToken: async () => token });
}

async function textOf(blob: Blob | null): Promise<string> {
  expect(blob).not.toBeNull();
  return (blob as Blob).text();
}

async function objectRow(bucketId: string, name: string): Promise<{ id: string; version: string } | undefined> {
  const [row] = await db<{ id: string; version: string }[]>`
    select id, version from storage.objects where bucket_id = ${bucketId} and name = ${name}`;
  return row;
}

/**
 * Asserts that nothing `list` reports now is still reported a few seconds later. A leak stays
 * forever; other suites' uploads in flight only pass through, however many there are.
 */
async function noneLinger(list: () => Promise<string[]> | string[]): Promise<void> {
  const seen = await list();
  await eventually(async () => {
    const now = new Set(await list());
    expect(seen.filter((item) => now.has(item))).toEqual([]);
  }, 100);
}

/**
 * Waits until `check` passes (up to `attempts` × 100 ms). Other suites may upload at the same time,
 * so a staging file or a just-placed file can briefly exist without being a leak.
 */
async function eventually(check: () => Promise<void> | void, attempts = 10): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await check();
      return;
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function bytesOnDisk(version: string): boolean {
  return existsSync(join(storageDir, "objects", version));
}

let alice: TestUser;
let bob: TestUser;
const service = serviceClient();
const anon = anonClient();

beforeAll(async () => {
  [alice, bob] = await Promise.all([createTestUser(), createTestUser()]);
});

afterAll(async () => {
  await db.end();
});

describe("uploads and downloads", () => {
  it("uploads a raw body and downloads the identical bytes", async () => {
    const bytes = randomBytes(64 * 1024);
    const path = `${alice.id}/raw/${randomUUID()}.bin`;
    const upload = await alice.client.storage.from("test-private").upload(path, bytes, { contentType: "application/octet-stream" });
    expect(upload.error).toBeNull();
    expect(upload.data).toMatchObject({ path, fullPath: `test-private/${path}` });
    expect(upload.data?.id).toMatch(/^[0-9a-f-]{36}$/);

    const download = await alice.client.storage.from("test-private").download(path);
    expect(download.error).toBeNull();
    expect(Buffer.from(await (download.data as Blob).arrayBuffer()).equals(bytes)).toBe(true);
    expect(download.data?.type).toBe("application/octet-stream");

    const row = await objectRow("test-private", path);
    expect(row?.id).toBe(upload.data?.id);
    expect(bytesOnDisk(row!.version)).toBe(true);
    const [{ owner_id, metadata }] = await db<{ owner_id: string; metadata: { size: number; mimetype: string; eTag: string } }[]>`
      select owner_id, metadata from storage.objects where bucket_id = 'test-private' and name = ${path}`;
    expect(owner_id).toBe(alice.id);
    expect(metadata).toMatchObject({ size: bytes.length, mimetype: "application/octet-stream" });
    expect(metadata.eTag).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it("uploads a Blob as multipart and keeps its content type and cache control", async () => {
    const path = `${alice.id}/blob/${randomUUID()}.txt`;
    const upload = await alice.client.storage
      .from("test-private")
      .upload(path, new Blob(["hello from a blob"], { type: "text/plain" }), { cacheControl: "120" });
    expect(upload.error).toBeNull();

    const download = await alice.client.storage.from("test-private").download(path);
    expect(await textOf(download.data)).toBe("hello from a blob");
    expect(download.data?.type).toBe("text/plain");

    const info = await alice.client.storage.from("test-private").info(path);
    expect(info.error).toBeNull();
    expect(info.data).toMatchObject({ name: path, bucketId: "test-private", size: 17, contentType: "text/plain", cacheControl: "max-age=120" });
  });

  it("refuses a duplicate upload without upsert and replaces the object with upsert", async () => {
    const bucket = alice.client.storage.from("test-private");
    const path = `${alice.id}/dup/${randomUUID()}.txt`;
    const first = await bucket.upload(path, "one");
    expect(first.error).toBeNull();
    const firstRow = await objectRow("test-private", path);

    const duplicate = await bucket.upload(path, "two");
    expect(duplicate.data).toBeNull();
    expect(duplicate.error).toMatchObject({ status: 400, statusCode: "409", message: "The resource already exists" });
    expect(await textOf((await bucket.download(path)).data)).toBe("one");

    const upsert = await bucket.upload(path, "three", { upsert: true });
    expect(upsert.error).toBeNull();
    expect(upsert.data?.id).toBe(first.data?.id);
    expect(await textOf((await bucket.download(path)).data)).toBe("three");

    // The replaced bytes are gone from disk and the row points at the new ones.
    const secondRow = await objectRow("test-private", path);
    expect(secondRow?.version).not.toBe(firstRow?.version);
    expect(bytesOnDisk(firstRow!.version)).toBe(false);
    expect(bytesOnDisk(secondRow!.version)).toBe(true);

    const update = await bucket.update(path, "four");
    expect(update.error).toBeNull();
    expect(await textOf((await bucket.download(path)).data)).toBe("four");
  });

  it("answers a missing object with Storage's error shape: HTTP 400 and statusCode 404", async () => {
    const response = await fetch(`${env.url}/storage/v1/object/test-private/${alice.id}/nothing-here.txt`, {
      headers: { apikey: env.anonKey, authorization: `Bearer ${alice.accessToken}` },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ statusCode: "404", code: "NoSuchKey", error: "not_found", message: "Object not found" });

    const download = await alice.client.storage.from("test-private").download(`${alice.id}/nothing-here.txt`);
    expect(download.error).toMatchObject({ status: 400, statusCode: "404" });
  });
});

describe("signed URLs", () => {
  it("serves the object before expiry and refuses it after", async () => {
    const bucket = alice.client.storage.from("test-private");
    const path = `${alice.id}/signed/${randomUUID()}.txt`;
    await bucket.upload(path, "signed content");

    // The token is bound to its path (a long-lived token, so only the path can make it fail).
    const lasting = await bucket.createSignedUrl(path, 60);
    const token = new URL(lasting.data!.signedUrl).searchParams.get("token");
    const elsewhere = await fetch(`${env.url}/storage/v1/object/sign/test-private/${alice.id}/other.txt?token=${token}`);
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.json()).toMatchObject({ statusCode: "400", code: "InvalidSignature" });

    const signed = await bucket.createSignedUrl(path, 3);
    expect(signed.error).toBeNull();
    const signedUrl = signed.data!.signedUrl;
    expect(signedUrl).toContain(`/storage/v1/object/sign/test-private/${path}?token=`);

    const fresh = await fetch(signedUrl);
    expect(fresh.status).toBe(200);
    expect(await fresh.text()).toBe("signed content");

    await new Promise((resolve) => setTimeout(resolve, 4_100));
    const expired = await fetch(signedUrl);
    expect(expired.status).toBe(400);
    expect(await expired.json()).toEqual({ statusCode: "400", code: "InvalidJWT", error: "InvalidJWT", message: '"exp" claim timestamp check failed' });
  });

  it("asks for a download with ?download", async () => {
    const bucket = alice.client.storage.from("test-private");
    const path = `${alice.id}/signed/${randomUUID()}.txt`;
    await bucket.upload(path, "attachment");
    const signed = await bucket.createSignedUrl(path, 60, { download: "report.txt" });
    const response = await fetch(signed.data!.signedUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-disposition")).toContain('filename="report.txt"');
  });

  it("signs several paths and reports the ones it can not sign", async () => {
    const bucket = alice.client.storage.from("test-private");
    const folder = `${alice.id}/many-${randomUUID()}`;
    await bucket.upload(`${folder}/a.txt`, "a");
    await bucket.upload(`${folder}/b.txt`, "b");

    const signed = await bucket.createSignedUrls([`${folder}/a.txt`, `${folder}/missing.txt`, `${folder}/b.txt`], 60);
    expect(signed.error).toBeNull();
    expect(signed.data).toHaveLength(3);
    const [a, missing, b] = signed.data!;
    expect(a).toMatchObject({ error: null, path: `${folder}/a.txt` });
    expect(missing).toMatchObject({
      error: "Either the object does not exist or you do not have access to it",
      path: `${folder}/missing.txt`,
      signedURL: null,
      signedUrl: null,
    });
    expect(await (await fetch(a.signedUrl!)).text()).toBe("a");
    expect(await (await fetch(b.signedUrl!)).text()).toBe("b");
  });
});

describe("access control through RLS", () => {
  let alicePath: string;

  beforeAll(async () => {
    alicePath = `${alice.id}/secret-${randomUUID()}.txt`;
    const upload = await alice.client.storage.from("test-private").upload(alicePath, "alice only");
    expect(upload.error).toBeNull();
  });

  it("does not let another user download, sign or remove a private object", async () => {
    const bobBucket = bob.client.storage.from("test-private");
    const download = await bobBucket.download(alicePath);
    expect(download.data).toBeNull();
    expect(download.error).toMatchObject({ status: 400, statusCode: "404" });

    const signed = await bobBucket.createSignedUrl(alicePath, 60);
    expect(signed.data).toBeNull();
    expect(signed.error).toMatchObject({ status: 400, statusCode: "404" });

    const signedMany = await bobBucket.createSignedUrls([alicePath], 60);
    expect(signedMany.data?.[0]).toMatchObject({ signedURL: null, error: "Either the object does not exist or you do not have access to it" });

    const removed = await bobBucket.remove([alicePath]);
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual([]);
    expect(await objectRow("test-private", alicePath)).toBeDefined();

    const overwrite = await bobBucket.upload(alicePath, "bob was here", { upsert: true });
    expect(overwrite.error).toMatchObject({ status: 400, statusCode: "403", message: "new row violates row-level security policy" });
    expect(await textOf((await alice.client.storage.from("test-private").download(alicePath)).data)).toBe("alice only");
  });

  it("does not let another user write into someone else's folder", async () => {
    const upload = await bob.client.storage.from("test-private").upload(`${alice.id}/from-bob.txt`, "intruder");
    expect(upload.error).toMatchObject({ status: 400, statusCode: "403" });
    expect((upload.error as { code?: string }).code).toBe("AccessDenied");
    expect(await objectRow("test-private", `${alice.id}/from-bob.txt`)).toBeUndefined();
  });

  it("refuses the anon role on the private bucket", async () => {
    const bucket = anon.storage.from("test-private");
    expect((await bucket.download(alicePath)).error).toMatchObject({ statusCode: "404" });
    expect((await bucket.createSignedUrl(alicePath, 60)).error).toMatchObject({ statusCode: "404" });
    expect((await bucket.upload(`${alice.id}/anon.txt`, "anon")).error).toMatchObject({ statusCode: "403" });
    expect((await bucket.list(alice.id)).data).toEqual([]);
    expect((await bucket.remove([alicePath])).data).toEqual([]);
    expect(await objectRow("test-private", alicePath)).toBeDefined();
  });

  it("lets the service role bypass the policies", async () => {
    const download = await service.storage.from("test-private").download(alicePath);
    expect(await textOf(download.data)).toBe("alice only");
  });

  it("refuses a forged or expired token with AccessDenied", async () => {
    const forged = await new SignJWT({ sub: alice.id, role: "authenticated" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("not-the-project-secret-not-the-project-secret"));
    const forgedResult = await clientWithToken(forged).storage.from("test-private").download(alicePath);
    expect(forgedResult.error).toMatchObject({ status: 400, statusCode: "403", message: "signature verification failed" });

    const expired = await mintAccessToken(alice.id, -60);
    const expiredResult = await clientWithToken(expired).storage.from("test-private").download(alicePath);
    expect(expiredResult.error).toMatchObject({ status: 400, statusCode: "403", message: '"exp" claim timestamp check failed' });
  });
});

describe("public buckets", () => {
  it("serves objects of a public bucket without any token", async () => {
    const path = `${alice.id}/public-${randomUUID()}.txt`;
    const upload = await alice.client.storage.from("test-public").upload(path, "for everyone", { contentType: "text/plain" });
    expect(upload.error).toBeNull();

    const { publicUrl } = alice.client.storage.from("test-public").getPublicUrl(path).data;
    const response = await fetch(publicUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain");
    expect(response.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(await response.text()).toBe("for everyone");
  });

  it("does not serve a private bucket on the public route", async () => {
    const path = `${alice.id}/not-public-${randomUUID()}.txt`;
    await alice.client.storage.from("test-private").upload(path, "private");
    const { publicUrl } = anon.storage.from("test-private").getPublicUrl(path).data;
    const response = await fetch(publicUrl);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ statusCode: "404", code: "NoSuchBucket", message: "Bucket not found" });
  });
});

describe("remove and list", () => {
  it("removes objects, returns the removed rows and deletes their bytes", async () => {
    const bucket = alice.client.storage.from("test-private");
    const folder = `${alice.id}/remove-${randomUUID()}`;
    await bucket.upload(`${folder}/a.txt`, "a");
    await bucket.upload(`${folder}/b.txt`, "b");
    const rowA = await objectRow("test-private", `${folder}/a.txt`);

    const removed = await bucket.remove([`${folder}/a.txt`, `${folder}/b.txt`, `${folder}/never-existed.txt`]);
    expect(removed.error).toBeNull();
    expect(removed.data?.map((row) => row.name).sort()).toEqual([`${folder}/a.txt`, `${folder}/b.txt`]);
    expect(removed.data?.[0]).toMatchObject({ bucket_id: "test-private" });

    expect(await objectRow("test-private", `${folder}/a.txt`)).toBeUndefined();
    expect(bytesOnDisk(rowA!.version)).toBe(false);
    expect((await bucket.download(`${folder}/a.txt`)).error).toMatchObject({ statusCode: "404" });
  });

  it("lists one folder level with sub-folders as entries without an id", async () => {
    const bucket = alice.client.storage.from("test-private");
    const folder = `${alice.id}/list-${randomUUID()}`;
    for (const name of ["b.txt", "a.txt", "photos/1.png", "photos/2.png", "docs/deep/x.txt"]) {
      const upload = await bucket.upload(`${folder}/${name}`, name);
      expect(upload.error).toBeNull();
    }

    const listed = await bucket.list(folder);
    expect(listed.error).toBeNull();
    expect(listed.data?.map((entry) => [entry.name, entry.id === null])).toEqual([
      ["docs", true],
      ["photos", true],
      ["a.txt", false],
      ["b.txt", false],
    ]);
    const file = listed.data!.find((entry) => entry.name === "a.txt")!;
    expect(file.metadata).toMatchObject({ size: 5, mimetype: "text/plain;charset=UTF-8" });
    expect(file.created_at).toBeTruthy();

    expect((await bucket.list(`${folder}/photos`)).data?.map((entry) => entry.name)).toEqual(["1.png", "2.png"]);
    expect((await bucket.list(folder, { search: "a" })).data?.map((entry) => entry.name)).toEqual(["a.txt"]);
    expect((await bucket.list(folder, { limit: 2, offset: 2 })).data?.map((entry) => entry.name)).toEqual(["a.txt", "b.txt"]);
    expect((await bucket.list(folder, { sortBy: { column: "name", order: "desc" } })).data?.map((entry) => entry.name)).toEqual([
      "photos",
      "docs",
      "b.txt",
      "a.txt",
    ]);

    // Bob's policies do not let him see Alice's folder.
    expect((await bob.client.storage.from("test-private").list(folder)).data).toEqual([]);
  });
});

describe("limits", () => {
  it("refuses an oversized upload, states the limit and leaves nothing behind", async () => {
    const bucket = service.storage.from("test-limited");
    const path = `big-${randomUUID()}.txt`;
    const raw = await bucket.upload(path, "x".repeat(2048), { contentType: "text/plain" });
    expect(raw.data).toBeNull();
    expect(raw.error).toMatchObject({ status: 400, statusCode: "413" });
    expect((raw.error as { code?: string }).code).toBe("EntityTooLarge");
    expect(raw.error?.message).toBe("The object exceeded the maximum allowed size");

    const multipart = await bucket.upload(path, new Blob(["y".repeat(2048)], { type: "text/plain" }));
    expect(multipart.error).toMatchObject({ status: 400, statusCode: "413" });
    expect(multipart.error?.message).toBe("The object exceeded the maximum allowed size");

    expect(await objectRow("test-limited", path)).toBeUndefined();
    await noneLinger(() => readdirSync(join(storageDir, "tmp")));

    const fits = await bucket.upload(path, "x".repeat(1024), { contentType: "text/plain" });
    expect(fits.error).toBeNull();
  });

  it("refuses an upload over the global file_size_limit of config.toml (50MiB)", async () => {
    const path = `${alice.id}/huge-${randomUUID()}.bin`;
    const upload = await alice.client.storage.from("test-private").upload(path, Buffer.alloc(50 * 1024 ** 2 + 1), {
      contentType: "application/octet-stream",
    });
    expect(upload.error).toMatchObject({ statusCode: "413" });
    expect(upload.error?.message).toBe("The object exceeded the maximum allowed size");
    expect(await objectRow("test-private", path)).toBeUndefined();
  });

  it("refuses a MIME type the bucket does not allow", async () => {
    const bucket = service.storage.from("test-limited");
    const refused = await bucket.upload(`doc-${randomUUID()}.pdf`, "%PDF", { contentType: "application/pdf" });
    expect(refused.error).toMatchObject({ status: 400, statusCode: "415", message: "mime type application/pdf is not supported" });
    const image = await bucket.upload(`img-${randomUUID()}.png`, "png", { contentType: "image/png" });
    expect(image.error).toBeNull();
  });
});

describe("buckets", () => {
  it("creates, reads, updates, empties and deletes a bucket with the service role", async () => {
    const id = `bucket-${randomUUID()}`;
    const created = await service.storage.createBucket(id, { public: false, fileSizeLimit: "1MB", allowedMimeTypes: ["image/png"] });
    expect(created).toEqual({ data: { name: id }, error: null });

    const bucket = await service.storage.getBucket(id);
    expect(bucket.data).toMatchObject({ id, name: id, public: false, file_size_limit: 1_000_000, allowed_mime_types: ["image/png"] });
    expect((await service.storage.listBuckets()).data?.map((b) => b.id)).toContain(id);

    const duplicate = await service.storage.createBucket(id, { public: false });
    expect(duplicate.error).toMatchObject({ status: 400, statusCode: "409" });

    const updated = await service.storage.updateBucket(id, { public: true, fileSizeLimit: null, allowedMimeTypes: null });
    expect(updated).toEqual({ data: { message: "Successfully updated" }, error: null });
    expect((await service.storage.getBucket(id)).data).toMatchObject({ public: true, file_size_limit: null, allowed_mime_types: null });

    await service.storage.from(id).upload("file.txt", "content");
    const notEmpty = await service.storage.deleteBucket(id);
    expect(notEmpty.error).toMatchObject({ status: 400, statusCode: "409" });

    expect((await service.storage.emptyBucket(id)).data).toEqual({ message: "Successfully emptied" });
    expect((await service.storage.deleteBucket(id)).data).toEqual({ message: "Successfully deleted" });
    expect((await service.storage.getBucket(id)).error).toMatchObject({ status: 400, statusCode: "404" });
  });

  it("refuses bucket creation without a policy, and a bucket limit above the global one", async () => {
    const denied = await alice.client.storage.createBucket(`user-bucket-${randomUUID()}`);
    expect(denied.error).toMatchObject({ status: 400, statusCode: "403" });

    const tooBig = await service.storage.createBucket(`huge-${randomUUID()}`, { public: false, fileSizeLimit: "100GB" });
    expect(tooBig.error).toMatchObject({ status: 400, statusCode: "413" });
    expect(tooBig.error?.message).toBe("The object exceeded the maximum allowed size");
  });

  it("answers an unknown bucket with NoSuchBucket", async () => {
    const missing = await service.storage.getBucket(`missing-${randomUUID()}`);
    expect(missing.error).toMatchObject({ status: 400, statusCode: "404", message: "Bucket not found" });
    const upload = await service.storage.from(`missing-${randomUUID()}`).upload("a.txt", "a");
    expect(upload.error).toMatchObject({ status: 400, statusCode: "404", message: "Bucket not found" });
  });
});

describe("move, copy and signed uploads", () => {
  it("moves and copies objects within the caller's rights", async () => {
    const bucket = alice.client.storage.from("test-private");
    const folder = `${alice.id}/move-${randomUUID()}`;
    await bucket.upload(`${folder}/a.txt`, "moving");
    const before = await objectRow("test-private", `${folder}/a.txt`);

    const moved = await bucket.move(`${folder}/a.txt`, `${folder}/b.txt`);
    expect(moved.error).toBeNull();
    expect(moved.data).toMatchObject({ message: "Successfully moved" });
    expect(await objectRow("test-private", `${folder}/a.txt`)).toBeUndefined();
    expect(await objectRow("test-private", `${folder}/b.txt`)).toEqual(before);

    const copied = await bucket.copy(`${folder}/b.txt`, `${folder}/c.txt`);
    expect(copied.error).toBeNull();
    expect(copied.data).toEqual({ path: `test-private/${folder}/c.txt` });
    expect(await textOf((await bucket.download(`${folder}/c.txt`)).data)).toBe("moving");

    // Bob can neither move Alice's object out of her folder nor copy it into his.
    const stolen = await bob.client.storage.from("test-private").move(`${folder}/b.txt`, `${bob.id}/b.txt`);
    expect(stolen.error).toMatchObject({ statusCode: "404" });
    const copiedAway = await bob.client.storage.from("test-private").copy(`${folder}/b.txt`, `${bob.id}/b.txt`);
    expect(copiedAway.error).toMatchObject({ statusCode: "404" });
  });

  it("uploads through a signed upload URL", async () => {
    const bucket = alice.client.storage.from("test-private");
    const path = `${alice.id}/signed-upload-${randomUUID()}.txt`;
    const signed = await bucket.createSignedUploadUrl(path);
    expect(signed.error).toBeNull();

    const uploaded = await anon.storage.from("test-private").uploadToSignedUrl(path, signed.data!.token, "via signed url");
    expect(uploaded.error).toBeNull();
    expect(await textOf((await bucket.download(path)).data)).toBe("via signed url");
    const [{ owner_id }] = await db<{ owner_id: string }[]>`
      select owner_id from storage.objects where bucket_id = 'test-private' and name = ${path}`;
    expect(owner_id).toBe(alice.id);

    // Bob may not sign an upload into Alice's folder.
    const refused = await bob.client.storage.from("test-private").createSignedUploadUrl(`${alice.id}/from-bob.txt`);
    expect(refused.error).toMatchObject({ statusCode: "403" });
  });
});

describe("bad input", () => {
  const headers = () => ({ apikey: env.anonKey, authorization: `Bearer ${alice.accessToken}` });

  it.each([
    ["a sign request without expiresIn", "POST", "/object/sign/test-private/x.txt", "{}"],
    ["a sign request with expiresIn 0", "POST", "/object/sign/test-private/x.txt", '{"expiresIn":0}'],
    ["a sign request that is not JSON", "POST", "/object/sign/test-private/x.txt", "{not json"],
    ["a batch sign without paths", "POST", "/object/sign/test-private", '{"expiresIn":60}'],
    ["a remove without prefixes", "DELETE", "/object/test-private", "{}"],
    ["a list with an unknown sort column", "POST", "/object/list/test-private", '{"prefix":"","sortBy":{"column":"size"}}'],
    ["a list with a negative limit", "POST", "/object/list/test-private", '{"prefix":"","limit":-1}'],
    ["a bucket with an invalid name", "POST", "/bucket", '{"name":"no/slashes"}'],
    ["a bucket with a malformed size", "POST", "/bucket", '{"name":"sized","file_size_limit":"lots"}'],
    ["a signed download without a token", "GET", "/object/sign/test-private/x.txt", undefined],
    ["a signed download with a garbage token", "GET", "/object/sign/test-private/x.txt?token=abc", undefined],
    ["an object name with a control character", "POST", "/object/test-private/a%01b.txt", "x"],
  ])("answers %s with a 4xx Storage error, not a 500", async (_label, method, path, body) => {
    const response = await fetch(`${env.url}/storage/v1${path}`, {
      method,
      headers: { ...headers(), "content-type": "application/json" },
      body,
    });
    expect(response.status).toBe(400);
    const json = (await response.json()) as Record<string, unknown>;
    expect(json).toMatchObject({ statusCode: expect.stringMatching(/^4\d\d$/), message: expect.any(String) });
    expect(typeof json.error).toBe("string");
  });

  it("answers an unknown route with a real 404 in Storage's shape", async () => {
    const response = await fetch(`${env.url}/storage/v1/nowhere`, { headers: headers() });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ statusCode: "404", message: "Route GET:/nowhere not found" });
  });

  it("answers HEAD with headers only and If-None-Match with 304", async () => {
    const path = `${alice.id}/head-${randomUUID()}.txt`;
    await alice.client.storage.from("test-private").upload(path, "cached");
    const url = `${env.url}/storage/v1/object/authenticated/test-private/${path}`;
    const head = await fetch(url, { method: "HEAD", headers: headers() });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("6");
    const etag = head.headers.get("etag")!;
    const revalidated = await fetch(url, { headers: { ...headers(), "if-none-match": etag } });
    expect(revalidated.status).toBe(304);
  });
});

describe("names, ranges and consistency", () => {
  it("round-trips names with spaces and non-ASCII characters, including signed URLs", async () => {
    const bucket = alice.client.storage.from("test-private");
    const path = `${alice.id}/café menu (1) ${randomUUID()}.txt`;
    expect((await bucket.upload(path, "bon appétit")).error).toBeNull();
    expect(await textOf((await bucket.download(path)).data)).toBe("bon appétit");
    expect((await bucket.list(alice.id, { search: "café" })).data?.map((entry) => entry.name)).toEqual([path.split("/")[1]]);
    const signed = await bucket.createSignedUrl(path, 60);
    expect(signed.error).toBeNull();
    expect(await (await fetch(signed.data!.signedUrl)).text()).toBe("bon appétit");
  });

  it("serves a byte range", async () => {
    const path = `${alice.id}/range-${randomUUID()}.txt`;
    await alice.client.storage.from("test-public").upload(path, "0123456789");
    const { publicUrl } = anon.storage.from("test-public").getPublicUrl(path).data;
    const partial = await fetch(publicUrl, { headers: { range: "bytes=2-5" } });
    expect(partial.status).toBe(206);
    expect(partial.headers.get("content-range")).toBe("bytes 2-5/10");
    expect(await partial.text()).toBe("2345");
    const beyond = await fetch(publicUrl, { headers: { range: "bytes=20-" } });
    expect(beyond.status).toBe(400);
    expect(await beyond.json()).toMatchObject({ statusCode: "416", code: "InvalidRange" });
  });

  it("keeps one row and one file when upserts race on the same name", async () => {
    const bucket = alice.client.storage.from("test-private");
    const path = `${alice.id}/race-${randomUUID()}.txt`;
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => bucket.upload(path, `writer ${i}`, { upsert: true })));
    expect(results.map((result) => result.error)).toEqual(Array(8).fill(null));
    const row = await objectRow("test-private", path);
    expect(bytesOnDisk(row!.version)).toBe(true);
    expect(await textOf((await bucket.download(path)).data)).toMatch(/^writer \d$/);
  });

  it("leaves no bytes without a row and no row without bytes", async () => {
    await noneLinger(async () => {
      const rows = new Set((await db<{ version: string }[]>`select version from storage.objects where version is not null`).map((row) => row.version));
      const onDisk = new Set(readdirSync(join(storageDir, "objects")));
      return [
        ...[...rows].filter((version) => !onDisk.has(version)).map((version) => `row without bytes: ${version}`),
        ...[...onDisk].filter((version) => !rows.has(version)).map((version) => `bytes without row: ${version}`),
        ...readdirSync(join(storageDir, "tmp")).map((file) => `staging file: ${file}`),
      ];
    });
  });
});
