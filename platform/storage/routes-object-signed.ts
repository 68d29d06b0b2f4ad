import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import type { StorageContext } from "./context.ts";
import { asCaller, type RequestScope } from "./database.ts";
import { storageErrors } from "./errors.ts";
import type { Identity } from "./identity.ts";
import { transformationsString } from "./image-transform.ts";
import type { ObjectAccess } from "./object-access.ts";
import { assertObjectKey, objectLocation } from "./object-keys.ts";
import { BUCKET, NAME, rawPath } from "./object-route-paths.ts";
import { findObject, visibleNames, writeObject } from "./objects-repository.ts";
import { readJson, signBody, signManyBody } from "./schemas.ts";
import { signedUploadPath, signedUrlPath, signObjectToken, signUploadToken, verifyObjectToken, verifyUploadToken } from "./signed-urls.ts";

/** The message Storage puts on each path it could not sign in a batch. */
const CANNOT_SIGN = "Either the object does not exist or you do not have access to it";

/**
 * Signed URLs: signing downloads (`POST /object/sign/{bucket}` for many, `/sign/{bucket}/{name}` for
 * one), serving them (`GET /object/sign/...`), and signed uploads (`/object/upload/sign/...`: POST
 * signs, PUT uploads with the token).
 */
export function objectSignedRoutes(ctx: StorageContext, access: ObjectAccess): Hono {
  const app = new Hono();

  app.post(`/sign/${BUCKET}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId } = objectLocation(rawPath(request), 2);
    const { expiresIn, paths } = await readJson(request, signManyBody);
    const scope = access.scopeOf(request, identity, "storage.object.sign_many");
    const visible = await asCaller(ctx.db, scope, (tx) => visibleNames(tx, bucketId, paths));
    return Response.json(
      paths.map((path) =>
        visible.has(path)
          ? { error: null, path, signedURL: signedUrlPath(bucketId, path, signObjectToken(bucketId, path, expiresIn, ctx.keys)) }
          : { error: CANNOT_SIGN, path, signedURL: null },
      ),
    );
  });

  app.post(`/sign/${BUCKET}/${NAME}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId, objectName } = objectLocation(rawPath(request), 2);
    const { expiresIn, transform } = await readJson(request, signBody);
    const scope = access.scopeOf(request, identity, "storage.object.sign");
    const object = await asCaller(ctx.db, scope, (tx) => findObject(tx, bucketId, objectName));
    if (!object) throw storageErrors.noSuchKey();
    // A URL signed with `transform` is an image URL: /render/image/sign/..., its token naming the transformations.
    const transformations = transform ? transformationsString(transform) : "";
    const token = signObjectToken(bucketId, objectName, expiresIn, ctx.keys, transformations || undefined);
    const path = signedUrlPath(bucketId, objectName, token);
    return Response.json({ signedURL: transformations ? path.replace(/^\/object\/sign\//, "/render/image/sign/") : path });
  });

  // GET also answers HEAD (Hono routes HEAD to GET), as Storage's download routes do.
  app.get(`/sign/${BUCKET}/${NAME}`, async (c) => {
    const request = c.req.raw;
    const url = new URL(request.url);
    const { bucketId, objectName } = objectLocation(url.pathname, 2);
    verifyObjectToken(url.searchParams.get("token") ?? undefined, bucketId, objectName, ctx.keys);
    return access.serve(request, () => findObject(ctx.db, bucketId, objectName));
  });

  app.post(`/upload/sign/${BUCKET}/${NAME}`, async (c) => {
    const request = c.req.raw;
    const identity = await access.authenticate(request);
    const { bucketId, objectName } = objectLocation(rawPath(request), 3);
    assertObjectKey(objectName);
    await access.existingBucket(bucketId);
    const upsert = request.headers.get("x-upsert") === "true";
    await assertCanUpload(ctx, access.scopeOf(request, identity, "storage.object.upload_sign"), bucketId, objectName, upsert);
    const token = signUploadToken(bucketId, objectName, { owner: identity.sub, upsert }, ctx.keys);
    return Response.json({ url: signedUploadPath(bucketId, objectName, token), token });
  });

  app.put(`/upload/sign/${BUCKET}/${NAME}`, async (c) => {
    const request = c.req.raw;
    const url = new URL(request.url);
    const { bucketId, objectName } = objectLocation(url.pathname, 3);
    const token = url.searchParams.get("token") ?? undefined;
    const grant = verifyUploadToken(token, bucketId, objectName, ctx.keys);
    // The URL's holder was authorised when it was signed; the upload itself runs with the service
    // role and records the signer as owner, as Storage does.
    const identity: Identity = {
      token: token ?? "",
      role: "service_role",
      claims: { role: "service_role", sub: grant.owner ?? undefined },
      sub: grant.owner,
    };
    return access.receive(request, access.scopeOf(request, identity, "storage.object.upload_signed"), bucketId, objectName, grant.upsert);
  });

  return app;
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
