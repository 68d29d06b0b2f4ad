import { findBucket } from "./buckets-repository.ts";
import type { StorageContext } from "./context.ts";
import { asCaller } from "./database.ts";
import { storageErrors } from "./errors.ts";
import { verifyAuthorization } from "./identity.ts";
import { parseTransformations, renderImage, transformOptions, type TransformOptions } from "./image-transform.ts";
import { objectLocation } from "./object-keys.ts";
import { findObject, type ObjectRow } from "./objects-repository.ts";
import { validate } from "./schemas.ts";
import { verifyObjectToken } from "./signed-urls.ts";

/** The transformation a request asks for in its query string (width, height, resize, quality, format). */
function queryOptions(url: URL): TransformOptions {
  const query = Object.fromEntries([...url.searchParams].filter(([name]) => ["width", "height", "resize", "quality", "format"].includes(name)));
  return validate(transformOptions, query, "querystring");
}

/**
 * `/render/image/{authenticated|public|sign}/{bucket}/{path}`: an image object transformed as
 * Storage's image service does (`transform` in storage-js downloads, public and signed URLs).
 * Access is decided as for the plain download of the same kind; a signed URL's token fixes the
 * transformation it was signed for.
 */
export function createRenderRoutes(ctx: StorageContext): (request: Request) => Promise<Response> {
  const render = async (object: ObjectRow | null, options: TransformOptions): Promise<Response> => {
    if (!object?.version) throw storageErrors.noSuchKey();
    const stored = await ctx.store.open(object.version);
    if (!stored) throw storageErrors.noSuchKey();
    const bytes = new Uint8Array(await new Response(stored.stream()).arrayBuffer());
    const { body, contentType } = await renderImage(bytes, options);
    return new Response(new Uint8Array(body), {
      headers: { "content-type": contentType, "content-length": String(body.length), "cache-control": object.metadata?.cacheControl ?? "no-cache" },
    });
  };

  return async (request) => {
    const url = new URL(request.url);
    const kind = url.pathname.split("/")[3];
    if (request.method !== "GET" && request.method !== "HEAD") throw storageErrors.notFoundRoute(request.method, url.pathname);
    const { bucketId, objectName } = objectLocation(url.pathname, 3);
    if (kind === "authenticated") {
      const identity = verifyAuthorization(request.headers.get("authorization"), ctx.keys);
      const scope = { identity, method: request.method, path: url.pathname, headers: request.headers, operation: "storage.render.image_authenticated" };
      return render(await asCaller(ctx.db, scope, (tx) => findObject(tx, bucketId, objectName)), queryOptions(url));
    }
    if (kind === "public") {
      const bucket = await findBucket(ctx.db, bucketId);
      if (!bucket?.public) throw storageErrors.noSuchBucket();
      return render(await findObject(ctx.db, bucketId, objectName), queryOptions(url));
    }
    if (kind === "sign") {
      const { transformations } = verifyObjectToken(url.searchParams.get("token") ?? undefined, bucketId, objectName, ctx.keys);
      return render(await findObject(ctx.db, bucketId, objectName), parseTransformations(transformations ?? ""));
    }
    throw storageErrors.notFoundRoute(request.method, url.pathname);
  };
}
