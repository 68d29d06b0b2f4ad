import { assertMimeTypeAllowed, uploadLimit } from "./bucket-rules.ts";
import { findBucket, type BucketRow } from "./buckets-repository.ts";
import type { StorageContext } from "./context.ts";
import type { RequestScope } from "./database.ts";
import { storageErrors } from "./errors.ts";
import { verifyAuthorization, type Identity } from "./identity.ts";
import { assertObjectKey } from "./object-keys.ts";
import { objectResponse } from "./object-response.ts";
import { commitObject } from "./object-writes.ts";
import type { ObjectRow } from "./objects-repository.ts";
import { readUpload } from "./upload-body.ts";

/**
 * What the `/object` route groups share: who the caller is, the bucket a route names, serving an
 * object's bytes and receiving an upload. Bound to one context by `objectAccess`.
 */
export interface ObjectAccess {
  /** The caller of a request that must carry a valid token (AccessDenied otherwise). */
  authenticate(request: Request): Promise<Identity>;
  /** The scope statements run in as the caller; `operation` is Storage's name for the action. */
  scopeOf(request: Request, identity: Identity, operation: string): RequestScope;
  /** The bucket, or NoSuchBucket. */
  existingBucket(bucketId: string): Promise<BucketRow>;
  /**
   * Serves an object found by `lookup`. If a concurrent upsert replaced the object between the
   * lookup and opening its bytes, the lookup runs once more and serves the new version.
   */
  serve(request: Request, lookup: () => Promise<ObjectRow | null>): Promise<Response>;
  /**
   * Receives an upload body into `bucketId/objectName` for `scope`'s caller: bucket limits and
   * MIME rules first, then the bytes to a staging file, then the row and the bytes together.
   */
  receive(request: Request, scope: RequestScope, bucketId: string, objectName: string, upsert: boolean): Promise<Response>;
}

/** The shared object helpers over `ctx`. */
export function objectAccess(ctx: StorageContext): ObjectAccess {
  const existingBucket = async (bucketId: string): Promise<BucketRow> => {
    const bucket = await findBucket(ctx.db, bucketId);
    if (!bucket) throw storageErrors.noSuchBucket();
    return bucket;
  };
  return {
    authenticate: async (request) => verifyAuthorization(request.headers.get("authorization"), ctx.keys),
    scopeOf: (request, identity, operation) => ({ identity, method: request.method, path: new URL(request.url).pathname, headers: request.headers, operation }),
    existingBucket,
    serve: async (request, lookup) => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const object = await lookup();
        if (!object?.version) throw storageErrors.noSuchKey();
        const bytes = await ctx.store.open(object.version);
        if (bytes) return objectResponse(request, object, bytes);
      }
      ctx.log.error("an object row points at bytes that are missing on disk", { url: request.url });
      throw storageErrors.noSuchKey();
    },
    receive: async (request, scope, bucketId, objectName, upsert) => {
      assertObjectKey(objectName);
      const bucket = await existingBucket(bucketId);
      const limit = uploadLimit(bucket, ctx.settings.fileSizeLimit);
      const upload = await readUpload(request, limit);
      assertMimeTypeAllowed(bucket, upload.contentType);
      const staged =
        upload.bytes instanceof Uint8Array ? await ctx.store.stageBytes(upload.bytes) : await ctx.store.stage(upload.bytes, limit);
      const { id } = await commitObject(ctx, scope, {
        bucketId,
        objectName,
        staged,
        contentType: upload.contentType,
        cacheControl: upload.cacheControl,
        contentEncoding: upload.contentEncoding,
        userMetadata: upload.userMetadata,
        upsert,
      });
      return Response.json({ Id: id, Key: `${bucketId}/${objectName}` });
    },
  };
}

/** Deletes the bytes of deleted rows; a failure only leaves an unreferenced file behind. */
export async function removeBytes(ctx: StorageContext, rows: ObjectRow[]): Promise<void> {
  const versions = rows.flatMap((row) => (row.version ? [row.version] : []));
  await ctx.store.remove(versions).catch((error: unknown) => ctx.log.error("could not delete removed bytes", { error }));
}
