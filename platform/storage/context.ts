import type { VerificationKeys } from "../keys/verify-jwt.ts";
import type { Logger } from "../log/logger.ts";
import type { Database } from "./database.ts";
import type { ObjectStore } from "./object-store.ts";
import type { StorageSettings } from "./settings.ts";

/** What every route handler needs: the database, the bytes on disk, the settings and the JWT key. */
export interface StorageContext {
  db: Database;
  store: ObjectStore;
  settings: StorageSettings;
  /** The project's JWT secret (verifies HS256 callers, signs URLs) and public signing keys. */
  keys: VerificationKeys;
  /** Reports unexpected failures; request paths must not write to the console themselves. */
  log: Logger;
}
