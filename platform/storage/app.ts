import { Hono } from "hono";
import { getPath as decodedPath } from "hono/utils/url";
import type { StackConfig } from "../config/stack-config.ts";
import type { PlatformService } from "../http/platform-service.ts";
import type { StorageContext } from "./context.ts";
import { connectDatabase } from "./database.ts";
import { fromDatabaseError, storageErrors } from "./errors.ts";
import { stackKeys } from "../keys/signing-keys.ts";
import { ObjectStore } from "./object-store.ts";
import { createBucketRoutes } from "./routes-bucket.ts";
import { objectAccess } from "./object-access.ts";
import { objectByNameRoutes } from "./routes-object-by-name.ts";
import { objectListRoutes } from "./routes-object-list.ts";
import { objectMoveRoutes } from "./routes-object-move.ts";
import { objectReadRoutes } from "./routes-object-read.ts";
import { objectSignedRoutes } from "./routes-object-signed.ts";
import { createRenderRoutes } from "./routes-render.ts";
import { loadStorageSettings } from "./settings.ts";
import { createLogger } from "../log/logger.ts";

/**
 * The Storage-API-compatible service the gateway mounts at `/storage/v1` (prefix already
 * stripped): buckets, uploads, downloads, signed URLs, listing and removal over storage.buckets and
 * storage.objects, with the bytes on local disk under `config.storageDir`. Access is decided by the
 * project's RLS policies on those tables, evaluated as the caller.
 */
export function createStorageService(config: StackConfig): PlatformService {
  const store = new ObjectStore(config.storageDir);
  const ctx: StorageContext = {
    db: connectDatabase(config),
    store,
    settings: loadStorageSettings(),
    keys: stackKeys(config),
    log: createLogger("storage"),
  };
  // The folders are prepared (and orphaned bytes swept) once, before the first request is served.
  const ready = prepareStore(ctx);
  const app = createStorageApp(ctx);
  return {
    fetch: async (request) => {
      await ready;
      return app.fetch(request);
    },
    close: async () => {
      await ctx.db.end({ timeout: 5 });
    },
  };
}

/**
 * Creates the store's folders and deletes bytes no row references. A database that can not be
 * reached yet only skips the sweep: serving requests matters more than tidying.
 */
async function prepareStore(ctx: StorageContext): Promise<void> {
  await ctx.store.init();
  try {
    const rows = await ctx.db<{ version: string }[]>`select version from storage.objects where version is not null`;
    await ctx.store.sweep(new Set(rows.map((row) => row.version)));
  } catch (error) {
    ctx.log.error("skipped sweeping unreferenced bytes", { error });
  }
}

/** The routes and the error handling, separate from the wiring so tests can build it on their own context. */
export function createStorageApp(ctx: StorageContext): Hono {
  const app = new Hono({ getPath: routedPath });
  const access = objectAccess(ctx);

  app.get("/status", (c) => c.body(null, 200));
  app.route("/bucket", createBucketRoutes(ctx));
  // Order matters: a route word (`list`, `move`, `sign`, `public`, `info`, ...) wins over a bucket
  // of the same name, so the by-name group comes last, as in Storage's router.
  app.route("/object", objectListRoutes(ctx, access));
  app.route("/object", objectMoveRoutes(ctx, access));
  app.route("/object", objectSignedRoutes(ctx, access));
  app.route("/object", objectReadRoutes(ctx, access));
  app.route("/object", objectByNameRoutes(ctx, access));
  const renderRoutes = createRenderRoutes(ctx);
  app.all("/render/image/*", (c) => renderRoutes(c.req.raw));

  app.notFound(async (c) => {
    await discardBody(c.req.raw);
    return storageErrors.notFoundRoute(c.req.method, c.req.path).toResponse();
  });
  app.onError(async (error, c) => {
    const failure = fromDatabaseError(error);
    if (!failure) ctx.log.error(`${c.req.method} ${decodedPath(c.req.raw)} failed`, { error });
    await discardBody(c.req.raw);
    return (failure ?? storageErrors.internal()).toResponse();
  });
  return app;
}

/**
 * The path routes match. Object routes match the path as sent, still encoded, as Storage's router
 * does: an encoded letter never spells a route word, and the handlers decode names segment by
 * segment themselves. Other routes match the path as Hono decodes it.
 */
function routedPath(request: Request): string {
  const raw = new URL(request.url).pathname;
  return raw === "/object" || raw.startsWith("/object/") ? raw : decodedPath(request);
}

/**
 * Reads what is left of a request body after an early refusal (a missing bucket, a denied
 * token), so the client receives the error rather than a connection reset mid-upload.
 */
async function discardBody(request: Request): Promise<void> {
  if (!request.body || request.bodyUsed || request.body.locked) return;
  try {
    await request.arrayBuffer();
  } catch {
    // Nothing to do: the client is gone.
  }
}
