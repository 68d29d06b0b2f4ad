import { Hono } from "hono";
import type { StorageContext } from "./context.ts";
import { asCaller } from "./database.ts";
import { storageErrors } from "./errors.ts";
import type { ObjectAccess } from "./object-access.ts";
import { objectLocation } from "./object-keys.ts";
import { BUCKET, rawPath } from "./object-route-paths.ts";
import { listFolder, listPage } from "./objects-repository.ts";
import { listObjectsBody, listV2Body, readJson } from "./schemas.ts";

/** `POST /object/list/{bucket}` (folders and objects under a prefix) and `POST /object/list-v2/{bucket}` (cursor pages). */
export function objectListRoutes(ctx: StorageContext, access: ObjectAccess): Hono {
  const app = new Hono();

  app.post(`/list/${BUCKET}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId } = objectLocation(rawPath(request), 2);
    const body = await readJson(request, listObjectsBody);
    // A prefix always names a folder, as in Storage: "photos" lists "photos/".
    const prefix = body.prefix.replace(/^\/+/, "");
    const folder = prefix && !prefix.endsWith("/") ? `${prefix}/` : prefix;
    const scope = access.scopeOf(request, identity, "storage.object.list");
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
  });

  app.post(`/list-v2/${BUCKET}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId } = objectLocation(rawPath(request), 2);
    const body = await readJson(request, listV2Body);
    const limit = Math.min(body.limit ?? 1000, 1000);
    const cursor = body.cursor ? decodeCursor(body.cursor) : null;
    const descending = (cursor?.order ?? body.sortBy?.order) === "desc";
    const scope = access.scopeOf(request, identity, "storage.object.list_v2");
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
  });

  return app;
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
