import { randomUUID } from "node:crypto";
import type { StorageContext } from "./context.ts";
import { asCaller, lockObjectName, type RequestScope } from "./database.ts";
import type { StagedObject } from "./object-store.ts";
import { lockCurrentObject, writeObject, type ObjectMetadata } from "./objects-repository.ts";

/** An object about to be written: where, what metadata, and its bytes already staged on disk. */
export interface ObjectWrite {
  bucketId: string;
  objectName: string;
  staged: StagedObject;
  contentType: string;
  cacheControl: string;
  contentEncoding?: string;
  /** The ETag to record; defaults to the staged bytes' MD5. */
  etag?: string;
  userMetadata: Record<string, unknown> | null;
  upsert: boolean;
}

/**
 * Commits an object so that row and bytes never disagree. The staged bytes are renamed to their
 * version's final place inside the transaction, right before it commits: if the row is refused
 * (RLS, duplicate, missing bucket) or the commit fails, the bytes are deleted; once it commits, the
 * bytes are already in place. Only then is the replaced version's file deleted, so readers of the
 * old row keep working until the new one is visible. The only leftover a crash can cause is an
 * unreferenced file, never a row without bytes.
 */
export async function commitObject(ctx: StorageContext, scope: RequestScope, write: ObjectWrite): Promise<{ id: string }> {
  const version = randomUUID();
  const newId = randomUUID();
  const metadata: ObjectMetadata = {
    eTag: write.etag ?? write.staged.etag,
    size: write.staged.size,
    mimetype: write.contentType,
    cacheControl: write.cacheControl,
    lastModified: new Date().toISOString(),
    contentLength: write.staged.size,
    httpStatusCode: 200,
    ...(write.contentEncoding ? { contentEncoding: write.contentEncoding } : {}),
  };
  let previous: { id: string; version: string | null } | null = null;
  let placed = false;
  try {
    await asCaller(
      ctx.db,
      scope,
      async (tx) => {
        await writeObject(
          tx,
          {
            id: newId,
            bucketId: write.bucketId,
            name: write.objectName,
            ownerId: scope.identity.sub,
            version,
            metadata,
            userMetadata: write.userMetadata,
          },
          write.upsert,
        );
        await ctx.store.place(write.staged, version);
        placed = true;
      },
      async (tx) => {
        await lockObjectName(tx, write.bucketId, write.objectName);
        previous = await lockCurrentObject(tx, write.bucketId, write.objectName);
      },
    );
  } catch (error) {
    await (placed ? ctx.store.remove([version]) : ctx.store.discard(write.staged)).catch((cleanup: unknown) =>
      ctx.log.error("could not clean up the bytes of a refused upload", { error: cleanup }),
    );
    throw error;
  }
  const replaced = previous as { id: string; version: string | null } | null;
  if (replaced?.version) {
    await ctx.store.remove([replaced.version]).catch((error: unknown) => ctx.log.error("could not delete replaced bytes", { error }));
  }
  return { id: replaced?.id ?? newId };
}
