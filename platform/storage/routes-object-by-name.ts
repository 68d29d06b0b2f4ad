import { Hono } from "hono";
import type { StorageContext } from "./context.ts";
import { asCaller } from "./database.ts";
import { storageErrors } from "./errors.ts";
import { removeBytes, type ObjectAccess } from "./object-access.ts";
import { objectLocation } from "./object-keys.ts";
import { BUCKET, NAME, rawPath } from "./object-route-paths.ts";
import { deleteObjects, findObject } from "./objects-repository.ts";
import { deleteObjectsBody, readJson } from "./schemas.ts";

/**
 * `/object/{bucket}/{name}`: upload (POST, `x-upsert` to replace), replace (PUT), download as the
 * caller (GET and HEAD), delete (DELETE); and `DELETE /object/{bucket}` for many names at once.
 * Mounted after the other object groups: their route words (`sign`, `public`, `list`, ...) win over
 * a bucket of the same name, as in Storage's router.
 */
export function objectByNameRoutes(ctx: StorageContext, access: ObjectAccess): Hono {
  const app = new Hono();

  app.delete(`/${BUCKET}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId } = objectLocation(rawPath(request), 1);
    const { prefixes } = await readJson(request, deleteObjectsBody);
    const scope = access.scopeOf(request, identity, "storage.object.delete_many");
    const deleted = await asCaller(ctx.db, scope, (tx) => deleteObjects(tx, bucketId, prefixes));
    await removeBytes(ctx, deleted);
    return Response.json(deleted);
  });

  const upload = (operation: string, upsertFrom: (request: Request) => boolean) => async (request: Request) => {
    const identity = await access.authenticate(request);
    const { bucketId, objectName } = objectLocation(rawPath(request), 1);
    return access.receive(request, access.scopeOf(request, identity, operation), bucketId, objectName, upsertFrom(request));
  };
  const create = upload("storage.object.upload", (request) => request.headers.get("x-upsert") === "true");
  // PUT replaces the object, creating it when missing, as Storage's update does.
  const replace = upload("storage.object.update", () => true);
  app.post(`/${BUCKET}/${NAME}`, (c) => create(c.req.raw));
  app.put(`/${BUCKET}/${NAME}`, (c) => replace(c.req.raw));

  app.get(`/${BUCKET}/${NAME}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId, objectName } = objectLocation(rawPath(request), 1);
    const scope = access.scopeOf(request, identity, "storage.object.get_authenticated");
    return access.serve(request, () => asCaller(ctx.db, scope, (tx) => findObject(tx, bucketId, objectName)));
  });

  app.delete(`/${BUCKET}/${NAME}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId, objectName } = objectLocation(rawPath(request), 1);
    const scope = access.scopeOf(request, identity, "storage.object.delete");
    const deleted = await asCaller(ctx.db, scope, (tx) => deleteObjects(tx, bucketId, [objectName]));
    if (deleted.length === 0) throw storageErrors.noSuchKey();
    await removeBytes(ctx, deleted);
    return Response.json({ message: "Successfully deleted" });
  });

  return app;
}
