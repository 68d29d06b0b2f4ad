/**
 * The file store of runs that have Storage: inline files (`{type: "file", data: <base64 data URL>}`)
 * are decoded and stored in the private bucket `workflow-files` under
 * `<workspace>/<workflow>/<execution>/<n>-<name>`, and become UserFiles whose `url` is a signed URL
 * valid 5 minutes (the spec's presigned URL); URL entries pass through without upload, with every
 * property but `uploadedAt` and `expiresAt`. Entries reach the store already checked
 * (core/files.ts: shape, scheme, a data URL's size computed before decoding), so a refused
 * entry never leaves a stored file behind.
 */
import { createServiceRoleClient } from "../../db/supabase-clients.ts";
import type { FileEntry, FileStore, UserFile } from "../core/context.ts";
import { FILE_URL_TTL_MS, memoryFileStore } from "../core/files.ts";

/** The private bucket of run files (migration …031100_workflows-executions.sql). */
export const FILES_BUCKET = "workflow-files";

/** Where a store puts bytes and how it signs them; Storage by default, an in-memory stand-in in unit tests. */
export interface FileBackend {
  upload(path: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** A URL that serves the object for `seconds`. */
  sign(path: string, seconds: number): Promise<string>;
}

/** A store that also lists the UserFiles it handed out (the run's record keeps them). */
export interface RecordingFileStore extends FileStore {
  readonly files: UserFile[];
}

/** An object name Storage accepts anywhere (hosted Storage is stricter than S3 about characters). */
export function safeObjectName(name: string): string {
  const cleaned = name.normalize("NFKD").replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+/, "");
  return (cleaned || "file").slice(0, 100);
}

/** The bytes of base64 text (Uint8Array.fromBase64 where the runtime has it). */
export function decodeBase64(text: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (text: string) => Uint8Array }).fromBase64;
  if (native) return native(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** Storage through the service-role client (the runtime writes; no user may read the bucket). */
export function storageBackend(): FileBackend {
  const bucket = () => createServiceRoleClient().storage.from(FILES_BUCKET);
  return {
    async upload(path, bytes, contentType) {
      const { error } = await bucket().upload(path, bytes, { contentType, upsert: true });
      if (error) throw new Error(`storing ${path} failed: ${error.message}`);
    },
    async sign(path, seconds) {
      const { data, error } = await bucket().createSignedUrl(path, seconds);
      if (error || !data) throw new Error(`signing ${path} failed: ${error?.message ?? "no URL"}`);
      return data.signedUrl;
    },
  };
}

/** Where a run's files go. */
export interface RunFilesTarget {
  workspaceId: string;
  workflowId: string;
  executionId: string;
}

/** A storage-backed store for one run (see the module comment). */
export function storageFileStore(target: RunFilesTarget, backend: FileBackend = storageBackend(), now: () => number = Date.now): RecordingFileStore {
  const passThrough = memoryFileStore(() => crypto.randomUUID(), now);
  const files: UserFile[] = [];
  let stored = 0;
  return {
    files,
    async store(entry: FileEntry, context) {
      if (entry.type === "url") {
        const file = await passThrough.store(entry, context);
        files.push(file);
        return file;
      }
      const comma = entry.data.indexOf(",");
      const header = entry.data.slice(5, comma);
      const bytes = decodeBase64(entry.data.slice(comma + 1));
      const type = entry.mime ?? (header.split(";")[0] || "application/octet-stream");
      stored += 1;
      const key = `${target.workspaceId}/${target.workflowId}/${target.executionId}/${stored}-${safeObjectName(entry.name)}`;
      await backend.upload(key, bytes, type);
      const uploadedAt = now();
      const url = await backend.sign(key, FILE_URL_TTL_MS / 1000);
      const file: UserFile = {
        id: `file_${crypto.randomUUID()}`,
        name: entry.name,
        url,
        size: bytes.byteLength,
        type,
        key,
        uploadedAt: new Date(uploadedAt).toISOString(),
        expiresAt: new Date(uploadedAt + FILE_URL_TTL_MS).toISOString(),
      };
      files.push(file);
      return file;
    },
  };
}
