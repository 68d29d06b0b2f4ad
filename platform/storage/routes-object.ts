import { randomUUID } from "node:crypto";
import { assertMimeTypeAllowed, uploadLimit } from "./bucket-rules.ts";
import { findBucket, type BucketRow } from "./buckets-repository.ts";
import type { StorageContext } from "./context.ts";
import { asCaller, type RequestScope } from "./database.ts";
import { storageErrors } from "./errors.ts";
import { verifyAuthorization, type Identity } from "./identity.ts";
import { assertObjectKey, objectLocation, pathSegments } from "./object-keys.ts";
import { objectInfo, objectResponse } from "./object-response.ts";
import { commitObject } from "./object-writes.ts";
import {
  deleteObjects,
  findObject,
  listFolder,
  listPage,
  renameObject,
  visibleNames,
  writeObject,
  type ObjectRow,
} from "./objects-repository.ts";
import { deleteObjectsBody, listObjectsBody, listV2Body, moveBody, readJson, signBody, signManyBody } from "./schemas.ts";
import { transformationsString } from "./image-transform.ts";
import {
  signedUploadPath,
  signedUrlPath,
  signObjectToken,
  signUploadToken,
  verifyObjectToken,
  verifyUploadToken,
} from "./signed-urls.ts";
import { readUpload } from "./upload-body.ts";

/** The message Storage puts on each path it could not sign in a batch. */
const CANNOT_SIGN = "Either the object does not exist or you do not have access to it";

type Handler = (request: Request, segments: string[]) => Promise<Response>;

/**
 * The `/object/...` routes. Paths are matched by hand on their segments because the object name
 * is the rest of the path, and the literal route words (`sign`, `public`, `list`, ...) take
 * precedence over a bucket of the same name, as in Storage's router.
 */
export function createObjectRoutes(ctx: StorageContext): (request: Request) => Promise<Response> {
  const handlers = objectHandlers(ctx);
  return async (request) => {
    const pathname = new URL(request.url).pathname;
    const segments = pathSegments(pathname);
    const handler = resolve(request.method, segments, handlers);
    if (!handler) throw storageErrors.notFoundRoute(request.method, pathname);
    return handler(request, segments);
  };
}

type Handlers = ReturnType<typeof objectHandlers>;

function resolve(method: string, segments: string[], h: Handlers): Handler | null {
  const [, first, second] = segments;
  const n = segments.length;
  const read = method === "GET" || method === "HEAD";
  if (method === "POST" && first === "list" && n === 3) return h.list;
  if (method === "POST" && first === "list-v2" && n === 3) return h.listV2;
  if (method === "POST" && (first === "move" || first === "copy") && n === 2) return first === "move" ? h.move : h.copy;
  if (first === "sign") {
    if (method === "POST" && n === 3) return h.signMany;
    if (method === "POST" && n >= 4) return h.signOne;
    if (read && n >= 4) return h.downloadSigned;
  }
  if (first === "upload" && second === "sign" && n >= 5) {
    if (method === "POST") return h.createUploadUrl;
    if (method === "PUT") return h.uploadSigned;
  }
  if (read && first === "public" && n >= 4) return h.downloadPublic;
  if (read && first === "authenticated" && n >= 4) return h.downloadAuthenticated;
  if (method === "GET" && first === "info") {
    if ((second === "public" || second === "authenticated") && n >= 5) return second === "public" ? h.infoPublic : h.infoAuthenticated;
    if (n >= 4) return h.infoAny;
  }
  if (method === "DELETE" && n === 2) return h.removeMany;
  if (n >= 3) {
    if (method === "POST") return h.upload;
    if (method === "PUT") return h.update;
    if (read) return h.download;
    if (method === "DELETE") return h.removeOne;
  }
  return null;
}

function objectHandlers(ctx: StorageContext) {
  const scopeOf = (request: Request, identity: Identity, operation: string): RequestScope => ({
    identity,
    method: request.method,
    path: new URL(request.url).pathname,
    headers: request.headers,
    operation,
  });
  const authenticate = (request: Request) => verifyAuthorization(request.headers.get("authorization"), ctx.keys);

  const existingBucket = async (bucketId: string): Promise<BucketRow> => {
    const bucket = await findBucket(ctx.db, bucketId);
    if (!bucket) throw storageErrors.noSuchBucket();
    return bucket;
  };

  /**
   * Serves an object found by `lookup`. If a concurrent upsert replaced the object between the
   * lookup and opening its bytes, the lookup runs once more and serves the new version.
   */
  const serve = async (request: Request, lookup: () => Promise<ObjectRow | null>): Promise<Response> => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const object = await lookup();
      if (!object?.version) throw storageErrors.noSuchKey();
      const bytes = await ctx.store.open(object.version);
      if (bytes) return objectResponse(request, object, bytes);
    }
    ctx.log.error("an object row points at bytes that are missing on disk", { url: request.url });
    throw storageErrors.noSuchKey();
  };

  /**
   * Receives an upload body into `bucketId/objectName` for `scope`'s caller: bucket limits and
   * MIME rules first, then the bytes to a staging file, then the row and the bytes together.
   */
  const receive = async (request: Request, scope: RequestScope, bucketId: string, objectName: string, upsert: boolean) => {
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
  };

  const upload = (operation: string, upsertFrom: (request: Request) => boolean): Handler => async (request) => {
    const identity = await authenticate(request);
    const { bucketId, objectName } = objectLocation(new URL(request.url).pathname, 1);
    return receive(request, scopeOf(request, identity, operation), bucketId, objectName, upsertFrom(request));
  };

  /**
   * Object details. Objects of a public bucket are described to anyone; otherwise the caller needs
   * SELECT. Without a valid token a private bucket answers like a missing one, as on Storage.
   */
  const info = (publicRoute: boolean, skip: number): Handler => async (request) => {
    const { bucketId, objectName } = objectLocation(new URL(request.url).pathname, skip);
    const bucket = await existingBucket(bucketId);
    let object: ObjectRow | null;
    if (bucket.public) {
      object = await findObject(ctx.db, bucketId, objectName);
    } else {
      if (publicRoute) throw storageErrors.noSuchBucket();
      const identity = await authenticate(request).catch(() => {
        throw storageErrors.noSuchBucket();
      });
      object = await asCaller(ctx.db, scopeOf(request, identity, "storage.object.info"), (tx) => findObject(tx, bucketId, objectName));
    }
    if (!object) throw storageErrors.noSuchKey();
    return Response.json(objectInfo(object));
  };

  return {
    upload: upload("storage.object.upload", (request) => request.headers.get("x-upsert") === "true"),
    // PUT replaces the object, creating it when missing, as Storage's update does.
    update: upload("storage.object.update", () => true),

    download: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId, objectName } = objectLocation(new URL(request.url).pathname, 1);
      const scope = scopeOf(request, identity, "storage.object.get_authenticated");
      return serve(request, () => asCaller(ctx.db, scope, (tx) => findObject(tx, bucketId, objectName)));
    }) satisfies Handler,

    downloadAuthenticated: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId, objectName } = objectLocation(new URL(request.url).pathname, 2);
      const scope = scopeOf(request, identity, "storage.object.get_authenticated");
      return serve(request, () => asCaller(ctx.db, scope, (tx) => findObject(tx, bucketId, objectName)));
    }) satisfies Handler,

    downloadPublic: (async (request) => {
      const { bucketId, objectName } = objectLocation(new URL(request.url).pathname, 2);
      const bucket = await findBucket(ctx.db, bucketId);
      // A private bucket answers like a missing one, so its existence is not disclosed.
      if (!bucket?.public) throw storageErrors.noSuchBucket();
      return serve(request, () => findObject(ctx.db, bucketId, objectName));
    }) satisfies Handler,

    downloadSigned: (async (request) => {
      const url = new URL(request.url);
      const { bucketId, objectName } = objectLocation(url.pathname, 2);
      await verifyObjectToken(url.searchParams.get("token") ?? undefined, bucketId, objectName, ctx.keys);
      return serve(request, () => findObject(ctx.db, bucketId, objectName));
    }) satisfies Handler,

    signOne: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId, objectName } = objectLocation(new URL(request.url).pathname, 2);
      const { expiresIn, transform } = await readJson(request, signBody);
      const scope = scopeOf(request, identity, "storage.object.sign");
      const object = await asCaller(ctx.db, scope, (tx) => findObject(tx, bucketId, objectName));
      if (!object) throw storageErrors.noSuchKey();
      // A URL signed with `transform` is an image URL: /render/image/sign/..., its token naming the transformations.
      const transformations = transform ? transformationsString(transform) : "";
      const token = await signObjectToken(bucketId, objectName, expiresIn, ctx.keys, transformations || undefined);
      const path = signedUrlPath(bucketId, objectName, token);
      return Response.json({ signedURL: transformations ? path.replace(/^\/object\/sign\//, "/render/image/sign/") : path });
    }) satisfies Handler,

    signMany: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId } = objectLocation(new URL(request.url).pathname, 2);
      const { expiresIn, paths } = await readJson(request, signManyBody);
      const scope = scopeOf(request, identity, "storage.object.sign_many");
      const visible = await asCaller(ctx.db, scope, (tx) => visibleNames(tx, bucketId, paths));
      const results = await Promise.all(
        paths.map(async (path) =>
          visible.has(path)
            ? { error: null, path, signedURL: signedUrlPath(bucketId, path, await signObjectToken(bucketId, path, expiresIn, ctx.keys)) }
            : { error: CANNOT_SIGN, path, signedURL: null },
        ),
      );
      return Response.json(results);
    }) satisfies Handler,

    removeMany: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId } = objectLocation(new URL(request.url).pathname, 1);
      const { prefixes } = await readJson(request, deleteObjectsBody);
      const scope = scopeOf(request, identity, "storage.object.delete_many");
      const deleted = await asCaller(ctx.db, scope, (tx) => deleteObjects(tx, bucketId, prefixes));
      await removeBytes(ctx, deleted);
      return Response.json(deleted);
    }) satisfies Handler,

    removeOne: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId, objectName } = objectLocation(new URL(request.url).pathname, 1);
      const scope = scopeOf(request, identity, "storage.object.delete");
      const deleted = await asCaller(ctx.db, scope, (tx) => deleteObjects(tx, bucketId, [objectName]));
      if (deleted.length === 0) throw storageErrors.noSuchKey();
      await removeBytes(ctx, deleted);
      return Response.json({ message: "Successfully deleted" });
    }) satisfies Handler,

    list: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId } = objectLocation(new URL(request.url).pathname, 2);
      const body = await readJson(request, listObjectsBody);
      // A prefix always names a folder, as in Storage: "photos" lists "photos/".
      const prefix = body.prefix.replace(/^\/+/, "");
      const folder = prefix && !prefix.endsWith("/") ? `${prefix}/` : prefix;
      const scope = scopeOf(request, identity, "storage.object.list");
      const entries = await asCaller(ctx.db, scope, (tx) =>
        listFolder(tx, bucketId, {
          prefix: folder,
          limit: body.limit,
          offset: body.offset,
          sortColumn: body.sortBy.column,
          sortOrder: body.sortBy.order,
          search: body.search,
        }),
      );
      return Response.json(entries);
    }) satisfies Handler,

    listV2: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId } = objectLocation(new URL(request.url).pathname, 2);
      const body = await readJson(request, listV2Body);
      const limit = Math.min(body.limit ?? 1000, 1000);
      const cursor = body.cursor ? decodeCursor(body.cursor) : null;
      const descending = (cursor?.order ?? body.sortBy?.order) === "desc";
      const scope = scopeOf(request, identity, "storage.object.list_v2");
      const rows = await asCaller(ctx.db, scope, (tx) =>
        listPage(tx, bucketId, { prefix: body.prefix, startAfter: cursor?.startAfter ?? "", limit: limit + 1, delimiter: body.with_delimiter === true, descending }),
      );
      const hasNext = rows.length > limit;
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return Response.json({
        hasNext,
        nextCursor: hasNext ? encodeCursor(last.name, descending ? "desc" : "asc") : undefined,
        nextCursorKey: hasNext ? last.name : undefined,
        folders: page.filter((entry) => entry.id === null).map((entry) => ({ ...entry, bucket_id: bucketId })),
        objects: page.filter((entry) => entry.id !== null).map((entry) => ({ ...entry, bucket_id: bucketId })),
      });
    }) satisfies Handler,

    infoAny: info(false, 2),
    infoAuthenticated: info(false, 3),
    infoPublic: info(true, 3),

    move: (async (request) => {
      const identity = await authenticate(request);
      const body = await readJson(request, moveBody);
      const destinationBucket = body.destinationBucket ?? body.bucketId;
      assertObjectKey(body.destinationKey);
      if (destinationBucket !== body.bucketId) await existingBucket(destinationBucket);
      const scope = scopeOf(request, identity, "storage.object.move");
      const id = await asCaller(ctx.db, scope, (tx) =>
        renameObject(tx, { bucketId: body.bucketId, name: body.sourceKey }, { bucketId: destinationBucket, name: body.destinationKey }),
      );
      if (!id) throw storageErrors.noSuchKey();
      return Response.json({ message: "Successfully moved", Id: id, Key: body.destinationKey });
    }) satisfies Handler,

    copy: (async (request) => {
      const identity = await authenticate(request);
      const body = await readJson(request, moveBody);
      const destinationBucketId = body.destinationBucket ?? body.bucketId;
      assertObjectKey(body.destinationKey);
      const destinationBucket = await existingBucket(destinationBucketId);
      const scope = scopeOf(request, identity, "storage.object.copy");
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
    }) satisfies Handler,

    createUploadUrl: (async (request) => {
      const identity = await authenticate(request);
      const { bucketId, objectName } = objectLocation(new URL(request.url).pathname, 3);
      assertObjectKey(objectName);
      await existingBucket(bucketId);
      const upsert = request.headers.get("x-upsert") === "true";
      await assertCanUpload(ctx, scopeOf(request, identity, "storage.object.upload_sign"), bucketId, objectName, upsert);
      const token = await signUploadToken(bucketId, objectName, { owner: identity.sub, upsert }, ctx.keys);
      return Response.json({ url: signedUploadPath(bucketId, objectName, token), token });
    }) satisfies Handler,

    uploadSigned: (async (request) => {
      const url = new URL(request.url);
      const { bucketId, objectName } = objectLocation(url.pathname, 3);
      const token = url.searchParams.get("token") ?? undefined;
      const grant = await verifyUploadToken(token, bucketId, objectName, ctx.keys);
      // The URL's holder was authorised when it was signed; the upload itself runs with the service
      // role and records the signer as owner, as Storage does.
      const identity: Identity = {
        token: token ?? "",
        role: "service_role",
        claims: { role: "service_role", sub: grant.owner ?? undefined },
        sub: grant.owner,
      };
      return receive(request, scopeOf(request, identity, "storage.object.upload_signed"), bucketId, objectName, grant.upsert);
    }) satisfies Handler,
  };
}

/** Storage's continuation token: base64 of "l:<last key>" and "o:<order>" lines. */
function encodeCursor(startAfter: string, order: "asc" | "desc"): string {
  return Buffer.from(`l:${startAfter}\no:${order}`).toString("base64");
}

/** Reads a continuation token back; anything else is Storage's InvalidParameter. */
function decodeCursor(token: string): { startAfter: string; order: string } {
  const result = { startAfter: "", order: "asc" };
  for (const part of Buffer.from(token, "base64").toString().split("\n")) {
    const match = /^(\S):(.*)$/.exec(part);
    if (!match || !["l", "o", "c", "a"].includes(match[1])) throw storageErrors.invalidParameter("continuation token");
    if (match[1] === "l") result.startAfter = match[2];
    if (match[1] === "o") result.order = match[2];
  }
  return result;
}

/** Deletes the bytes of deleted rows; a failure only leaves an unreferenced file behind. */
async function removeBytes(ctx: StorageContext, rows: ObjectRow[]): Promise<void> {
  const versions = rows.flatMap((row) => (row.version ? [row.version] : []));
  await ctx.store.remove(versions).catch((error: unknown) => ctx.log.error("could not delete removed bytes", { error }));
}

/** Rolls back the probe insert of `assertCanUpload`. */
class ProbeRollback extends Error {}

/**
 * Checks, before signing an upload URL, that the caller could upload there: a probe row is
 * inserted as the caller and the transaction rolled back, so the project's policies decide.
 */
async function assertCanUpload(ctx: StorageContext, scope: RequestScope, bucketId: string, objectName: string, upsert: boolean): Promise<void> {
  const probe = "00000000-0000-4000-8000-000000000000";
  try {
    await asCaller(ctx.db, scope, async (tx) => {
      await writeObject(
        tx,
        {
          id: randomUUID(),
          bucketId,
          name: objectName,
          ownerId: scope.identity.sub,
          version: probe,
          metadata: { eTag: "", size: 0, mimetype: "", cacheControl: "", lastModified: "", contentLength: 0, httpStatusCode: 200 },
          userMetadata: null,
        },
        upsert,
      );
      throw new ProbeRollback();
    });
  } catch (error) {
    if (!(error instanceof ProbeRollback)) throw error;
  }
}
