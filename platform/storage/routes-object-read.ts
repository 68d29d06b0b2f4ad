import { Hono } from "hono";
import type { StorageContext } from "./context.ts";
import { asCaller } from "./database.ts";
import { storageErrors } from "./errors.ts";
import type { ObjectAccess } from "./object-access.ts";
import { objectLocation } from "./object-keys.ts";
import { objectInfo } from "./object-response.ts";
import { BUCKET, NAME, rawPath } from "./object-route-paths.ts";
import { findBucket } from "./buckets-repository.ts";
import { findObject, type ObjectRow } from "./objects-repository.ts";

/**
 * Reads named by their access: `GET /object/public/...` (public buckets, no token),
 * `GET /object/authenticated/...` (as the caller) and `GET /object/info/...` (the object's details).
 * The GET routes answer HEAD too (Hono routes HEAD to GET); the info routes do not, as on Storage,
 * so a HEAD there falls through to the plain download of a bucket named "info".
 */
export function objectReadRoutes(ctx: StorageContext, access: ObjectAccess): Hono {
  const app = new Hono();

  app.get(`/public/${BUCKET}/${NAME}`, async (c) => {
    const request = c.req.raw;
    const { bucketId, objectName } = objectLocation(rawPath(request), 2);
    const bucket = await findBucket(ctx.db, bucketId);
    // A private bucket answers like a missing one, so its existence is not disclosed.
    if (!bucket?.public) throw storageErrors.noSuchBucket();
    return access.serve(request, () => findObject(ctx.db, bucketId, objectName));
  });

  app.get(`/authenticated/${BUCKET}/${NAME}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId, objectName } = objectLocation(rawPath(request), 2);
    const scope = access.scopeOf(request, identity, "storage.object.get_authenticated");
    return access.serve(request, () => asCaller(ctx.db, scope, (tx) => findObject(tx, bucketId, objectName)));
  });

  /**
   * Object details. Objects of a public bucket are described to anyone; otherwise the caller needs
   * SELECT. Without a valid token a private bucket answers like a missing one, as on Storage.
   */
  const info = (publicRoute: boolean, skip: number) => async (request: Request): Promise<Response> => {
    const { bucketId, objectName } = objectLocation(rawPath(request), skip);
    const bucket = await access.existingBucket(bucketId);
    let object: ObjectRow | null;
    if (bucket.public) {
      object = await findObject(ctx.db, bucketId, objectName);
    } else {
      if (publicRoute) throw storageErrors.noSuchBucket();
      const identity = await access.authenticate(request).catch(() => {
        throw storageErrors.noSuchBucket();
      });
      object = await asCaller(ctx.db, access.scopeOf(request, identity, "storage.object.info"), (tx) => findObject(tx, bucketId, objectName));
    }
    if (!object) throw storageErrors.noSuchKey();
    return Response.json(objectInfo(object));
  };
  const infoRoutes: [string, (request: Request) => Promise<Response>][] = [
    [`/info/public/${BUCKET}/${NAME}`, info(true, 3)],
    [`/info/authenticated/${BUCKET}/${NAME}`, info(false, 3)],
    [`/info/${BUCKET}/${NAME}`, info(false, 2)],
  ];
  for (const [path, handler] of infoRoutes) {
    app.get(path, async (c, next) => {
      if (c.req.method === "HEAD") return next();
      return handler(c.req.raw);
    });
  }

  return app;
}
