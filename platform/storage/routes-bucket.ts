import { Hono } from "hono";
import { bucketSizeLimit } from "./bucket-rules.ts";
import { deleteBucket, findBucket, insertBucket, listBuckets, updateBucket } from "./buckets-repository.ts";
import type { StorageContext } from "./context.ts";
import { asCaller, type RequestScope } from "./database.ts";
import { storageErrors } from "./errors.ts";
import { verifyAuthorization } from "./identity.ts";
import { assertBucketName, pathBucketId } from "./object-keys.ts";
import { bucketHasObjects, deleteAllObjects } from "./objects-repository.ts";
import { createBucketBody, listBucketsQuery, readJson, updateBucketBody, validate } from "./schemas.ts";

/**
 * The `/bucket` routes. Every statement runs as the caller, so creating, reading, changing or
 * deleting a bucket needs the matching policy on storage.buckets (or the service role), as on
 * Storage. A bucket the caller can not see answers "Bucket not found".
 */
export function createBucketRoutes(ctx: StorageContext): Hono {
  const app = new Hono();
  const scopeOf = async (request: Request, operation: string): Promise<RequestScope> => ({
    identity: verifyAuthorization(request.headers.get("authorization"), ctx.keys),
    method: request.method,
    path: new URL(request.url).pathname,
    headers: request.headers,
    operation,
  });

  app.get("/", async (c) => {
    const scope = await scopeOf(c.req.raw, "storage.bucket.list");
    const options = validate(listBucketsQuery, c.req.query(), "querystring");
    const buckets = await asCaller(ctx.db, scope, (tx) => listBuckets(tx, options));
    return c.json(buckets);
  });

  app.post("/", async (c) => {
    const scope = await scopeOf(c.req.raw, "storage.bucket.create");
    const body = await readJson(c.req.raw, createBucketBody);
    const id = body.id ?? body.name;
    assertBucketName(id);
    assertBucketName(body.name);
    const fileSizeLimit = bucketSizeLimit(body.file_size_limit, ctx.settings.fileSizeLimit);
    await asCaller(ctx.db, scope, (tx) =>
      insertBucket(tx, id, body.name, scope.identity.sub, {
        public: body.public ?? false,
        fileSizeLimit,
        allowedMimeTypes: body.allowed_mime_types,
      }),
    );
    return c.json({ name: body.name });
  });

  app.get("/:id", async (c) => {
    const scope = await scopeOf(c.req.raw, "storage.bucket.get");
    const bucket = await asCaller(ctx.db, scope, (tx) => findBucket(tx, pathBucketId(c.req.param("id"))));
    if (!bucket) throw storageErrors.noSuchBucket();
    return c.json(bucket);
  });

  app.put("/:id", async (c) => {
    const scope = await scopeOf(c.req.raw, "storage.bucket.update");
    const body = await readJson(c.req.raw, updateBucketBody);
    const fileSizeLimit = bucketSizeLimit(body.file_size_limit, ctx.settings.fileSizeLimit);
    const updated = await asCaller(ctx.db, scope, (tx) =>
      updateBucket(tx, pathBucketId(c.req.param("id")), {
        public: body.public ?? undefined,
        fileSizeLimit,
        allowedMimeTypes: body.allowed_mime_types,
      }),
    );
    if (!updated) throw storageErrors.noSuchBucket();
    return c.json({ message: "Successfully updated" });
  });

  app.post("/:id/empty", async (c) => {
    const scope = await scopeOf(c.req.raw, "storage.bucket.empty");
    const id = pathBucketId(c.req.param("id"));
    const versions = await asCaller(ctx.db, scope, async (tx) => {
      if (!(await findBucket(tx, id))) throw storageErrors.noSuchBucket();
      return deleteAllObjects(tx, id);
    });
    await ctx.store.remove(versions).catch((error: unknown) => ctx.log.error("could not delete emptied bytes", { error }));
    return c.json({ message: "Successfully emptied" });
  });

  app.delete("/:id", async (c) => {
    const scope = await scopeOf(c.req.raw, "storage.bucket.delete");
    const id = pathBucketId(c.req.param("id"));
    const deleted = await asCaller(
      ctx.db,
      scope,
      (tx) => deleteBucket(tx, id),
      async (tx) => {
        // Counted with the service's rights: objects the caller can not see still keep the bucket.
        if (await bucketHasObjects(tx, id)) throw storageErrors.bucketNotEmpty();
      },
    ).catch((error: unknown) => {
      // An object uploaded since the count makes the foreign key refuse the delete.
      if ((error as { code?: unknown }).code === "23503") throw storageErrors.bucketNotEmpty();
      throw error;
    });
    if (!deleted) throw storageErrors.noSuchBucket();
    return c.json({ message: "Successfully deleted" });
  });

  return app;
}
