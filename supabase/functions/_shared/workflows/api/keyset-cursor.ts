/**
 * The paging cursor of the logs and runs APIs: the keyset position (the time and id of the last
 * entry of a page: a log's start, a run's admission) and the order it was read in, as base64url
 * JSON. Clients treat it as opaque; the server checks everything in it, so a tampered or truncated
 * cursor is a 400, never a 5xx.
 *
 * The time keeps Postgres's microseconds (a JavaScript Date would round them to milliseconds, and
 * two runs a few microseconds apart would then be skipped or repeated).
 */
import { z } from "zod";
import { UUID_PATTERN } from "../../http/uuid.ts";

/** Where a page ended, in the order it was read. */
export interface KeysetCursor {
  /** The keyset's UTC time to the microsecond, e.g. `2026-11-23T10:15:00.123456Z`. */
  at: string;
  id: string;
  order: "asc" | "desc";
}

const CURSOR_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z$/;

/** Whether `value` is a real UTC instant in the cursor's spelling (no 30 February, no year 0). */
export function isCursorTime(value: string): boolean {
  const parts = CURSOR_TIME.exec(value);
  if (!parts || Number(parts[1]) < 1) return false;
  const milliseconds = `${value.slice(0, 23)}Z`;
  const date = new Date(milliseconds);
  return !Number.isNaN(date.getTime()) && date.toISOString() === milliseconds;
}

const cursorShape = z.strictObject({
  t: z.string().refine(isCursorTime),
  i: z.string().regex(UUID_PATTERN),
  o: z.enum(["asc", "desc"]),
});

/** The opaque text of a cursor. */
export function encodeCursor(cursor: KeysetCursor): string {
  const json = JSON.stringify({ t: cursor.at, i: cursor.id, o: cursor.order });
  return btoa(json).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The cursor `text` stands for, or null when it is not one this API wrote. */
export function decodeCursor(text: string): KeysetCursor | null {
  // Padding is optional in base64url; a client that adds it back still sends the same cursor.
  const unpadded = text.replace(/={1,2}$/, "");
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(unpadded) || unpadded.length % 4 === 1) return null;
  let json: unknown;
  try {
    json = JSON.parse(atob(unpadded.replaceAll("-", "+").replaceAll("_", "/")));
  } catch {
    return null;
  }
  const parsed = cursorShape.safeParse(json);
  return parsed.success ? { at: parsed.data.t, id: parsed.data.i, order: parsed.data.o } : null;
}
