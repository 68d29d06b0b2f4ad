import { createHash, randomUUID } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { copyFile, mkdir, open, readdir, rename, rm, stat, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import type { StorageFailure } from "./errors.ts";

/**
 * Object bytes on local disk. Every upload gets a fresh version id and its bytes live at
 * `<storageDir>/objects/<version>`; the row in storage.objects points at the version. That makes
 * replacing an object a matter of committing a row that points at new bytes and only then
 * deleting the old file, so a reader never sees half-written bytes and a failed upsert leaves the
 * old object intact. Bytes are first written under `tmp/`, on the same filesystem, so moving them
 * into place is an atomic rename.
 */
export class ObjectStore {
  private readonly objectsDir: string;
  private readonly tmpDir: string;

  constructor(root: string) {
    this.objectsDir = join(root, "objects");
    this.tmpDir = join(root, "tmp");
  }

  /** Creates the folders and removes staging files a crashed process left behind. */
  async init(): Promise<void> {
    await mkdir(this.objectsDir, { recursive: true });
    await rm(this.tmpDir, { recursive: true, force: true });
    await mkdir(this.tmpDir, { recursive: true });
  }

  /**
   * Streams a body into a staging file, hashing it and counting bytes. Past `limit` bytes it stops
   * writing, deletes the staging file, reads the rest of the body (so the client gets the error
   * instead of a reset connection) and throws `tooLarge()`.
   */
  async stage(body: ReadableStream<Uint8Array> | null, limit?: SizeLimit): Promise<StagedObject> {
    const path = join(this.tmpDir, randomUUID());
    const hash = createHash("md5");
    const file = createWriteStream(path, { flags: "wx" });
    let size = 0;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      reader = body?.getReader();
      while (reader) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (limit && size > limit.bytes) {
          await drain(reader, limit.bytes);
          throw limit.failure();
        }
        hash.update(value);
        if (!file.write(value)) await new Promise<void>((resolve) => file.once("drain", () => resolve()));
      }
      file.end();
      await finished(file);
      return { path, size, etag: `"${hash.digest("hex")}"` };
    } catch (error) {
      await closed(file);
      await rm(path, { force: true });
      throw error;
    }
  }

  /** Stages bytes already in memory (the file part of a multipart upload). */
  async stageBytes(bytes: Uint8Array<ArrayBuffer>): Promise<StagedObject> {
    return this.stage(new Blob([bytes]).stream());
  }

  /** Moves staged bytes to their final place under `version`. */
  async place(staged: StagedObject, version: string): Promise<void> {
    await rename(staged.path, this.versionPath(version));
  }

  /** Removes a staging file that will not be placed. */
  async discard(staged: StagedObject): Promise<void> {
    await rm(staged.path, { force: true });
  }

  /** Copies a version's bytes into a new staging file (for object copy). */
  async stageCopy(version: string): Promise<StagedObject> {
    const path = join(this.tmpDir, randomUUID());
    await copyFile(this.versionPath(version), path);
    const { size } = await stat(path);
    return { path, size, etag: "" };
  }

  /** Deletes the bytes of versions no row points at any more. Missing files are not an error. */
  async remove(versions: Iterable<string>): Promise<void> {
    await Promise.all([...versions].map((version) => rm(this.versionPath(version), { force: true })));
  }

  /**
   * Opens a version for reading. The handle keeps the bytes readable even if a concurrent upsert
   * replaces the object and deletes the file meanwhile. Null when the file is missing.
   */
  async open(version: string): Promise<StoredBytes | null> {
    let handle: FileHandle;
    try {
      handle = await open(this.versionPath(version), "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    const { size } = await handle.stat();
    let streaming = false;
    return {
      size,
      stream: (range) => {
        streaming = true;
        // autoClose: the stream closes the handle when it ends or the client goes away.
        const file = handle.createReadStream({ autoClose: true, start: range?.start, end: range?.end });
        return Readable.toWeb(file) as ReadableStream<Uint8Array>;
      },
      close: async () => {
        if (!streaming) await handle.close();
      },
    };
  }

  /**
   * Deletes files no row points at: bytes a crash left between placing and committing, or bytes
   * of a database that was reset since. Only safe while no upload is in flight (at startup).
   */
  async sweep(referenced: Set<string>): Promise<number> {
    const orphans = (await readdir(this.objectsDir)).filter((version) => !referenced.has(version));
    await Promise.all(orphans.map((version) => rm(join(this.objectsDir, version), { force: true })));
    return orphans.length;
  }

  private versionPath(version: string): string {
    if (!/^[0-9a-f-]{36}$/.test(version)) throw new Error(`not a version id: ${version}`);
    return join(this.objectsDir, version);
  }
}

/** A size cap for staging and the error to raise past it. */
export interface SizeLimit {
  bytes: number;
  failure: () => StorageFailure;
}

/** Bytes written to a staging file and not yet placed. */
export interface StagedObject {
  path: string;
  size: number;
  /** Quoted MD5 of the bytes, as S3 and Storage report an ETag (empty for copies, which keep theirs). */
  etag: string;
}

/** An open stored object: call `stream()` once (it closes the file when done), or `close()`. */
export interface StoredBytes {
  size: number;
  /** The bytes, or the inclusive byte range `start`..`end` of them. */
  stream(range?: { start: number; end: number }): ReadableStream<Uint8Array>;
  close(): Promise<void>;
}

/** Reads and drops the rest of a rejected body, up to a bound so a runaway client can not pin us. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, limit: number): Promise<void> {
  const bound = Math.max(limit * 4, 256 * 1024 ** 2);
  let seen = 0;
  try {
    while (seen < bound) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away; there is nobody left to answer.
  }
}

/**
 * Destroys a write stream and resolves once its file is closed. The file is opened
 * asynchronously: removing it right after destroy() can run before the open completes, which
 * then creates an empty file that nothing removes.
 */
function closed(file: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (file.closed) return resolve();
    file.once("close", () => resolve());
    file.destroy();
  });
}
