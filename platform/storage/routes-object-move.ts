import { Hono } from "hono";
import { assertMimeTypeAllowed, uploadLimit } from "./bucket-rules.ts";
import type { StorageContext } from "./context.ts";
import { asCaller } from "./database.ts";
import { storageErrors } from "./errors.ts";
import type { ObjectAccess } from "./object-access.ts";
import { assertObjectKey } from "./object-keys.ts";
import { commitObject } from "./object-writes.ts";
import { findObject, renameObject } from "./objects-repository.ts";
import { moveBody, readJson } from "./schemas.ts";

/** `POST /object/move` (rename, within or across buckets) and `POST /object/copy` (new bytes, same metadata). */
export function objectMoveRoutes(ctx: StorageContext, access: ObjectAccess): Hono {
  const app = new Hono();

  app.post("/move", async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const body = await readJson(request, moveBody);
    const destinationBucket = body.destinationBucket ?? body.bucketId;
    assertObjectKey(body.destinationKey);
    if (destinationBucket !== body.bucketId) await access.existingBucket(destinationBucket);
    const scope = access.scopeOf(request, identity, "storage.object.move");
    const id = await asCaller(ctx.db, scope, (tx) =>
      renameObject(tx, { bucketId: body.bucketId, name: body.sourceKey }, { bucketId: destinationBucket, name: body.destinationKey }),
    );
    if (!id) throw storageErrors.noSuchKey();
    return Response.json({ message: "Successfully moved", Id: id, Key: body.destinationKey });
  });

  app.post("/copy", async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const body = await readJson(request, moveBody);
    const destinationBucketId = body.destinationBucket ?? body.bucketId;
    assertObjectKey(body.destinationKey);
    const destinationBucket = await access.existingBucket(destinationBucketId);
    const scope = access.scopeOf(request, identity, "storage.object.copy");
    const source = await asCaller(ctx.db, scope, (tx) => findObject(tx, body.bucketId, body.sourceKey));
    if (!source?.version || !source.metadata) throw storageErrors.noSuchKey();
    const limit = uploadLimit(destinationBucket, ctx.settings.fileSizeLimit);
    if (source.metadata.size > limit.bytes) throw limit.failure();
    assertMimeTypeAllowed(destinationBucket, source.metadata.mimetype);
    const staged = await ctx.store.stageCopy(source.version).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw storageErrors.noSuchKey();
      throw error;
    });
    const { id } = await commitObject(ctx, scope, {
      bucketId: destinationBucketId,
      objectName: body.destinationKey,
      staged,
      contentType: source.metadata.mimetype,
      cacheControl: source.metadata.cacheControl,
      contentEncoding: source.metadata.contentEncoding,
      etag: source.metadata.eTag,
      userMetadata: source.user_metadata,
      upsert: request.headers.get("x-upsert") === "true",
    });
    return Response.json({ Id: id, Key: `${destinationBucketId}/${body.destinationKey}` });
  });

  return app;
}
