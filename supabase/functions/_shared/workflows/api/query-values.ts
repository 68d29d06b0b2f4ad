/**
 * Query-string values the logs and runs APIs share, each parsed for what it means (every parameter
 * arrives as text): UUIDs, ISO 8601 instants kept to Postgres's microsecond, page sizes within a
 * cap, the opaque keyset cursor and the order it was read in, and the run triggers.
 */
import { z } from "zod";
import { UUID_PATTERN } from "../../http/uuid.ts";
import { decodeCursor, type KeysetCursor } from "./keyset-cursor.ts";

/** How a run can be started (public.workflow_trigger). */
export const TRIGGERS = ["api", "webhook", "schedule", "manual", "chat"] as const;

/** A UUID. */
export const uuid = z.string().regex(UUID_PATTERN, "must be a UUID (8-4-4-4-12 hexadecimal digits)");

/** One trigger. */
export const trigger = z.enum(TRIGGERS, { message: `must be ${TRIGGERS.join(", ")}` });

/**
 * An ISO 8601 timestamp with a zone (Z or ±hh:mm), as the UTC instant it names, to the microsecond
 * (what Postgres keeps): a bound copied from an entry's time must include that very entry. The
 * output sorts as text in time order.
 */
export const timestamp = z.iso
  .datetime({ offset: true, message: "must be an ISO 8601 timestamp with a zone, such as 2026-01-31T23:00:00Z" })
  .transform((text, context) => {
    const date = new Date(text);
    if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) {
      context.addIssue({ code: "custom", message: "is not a date between the years 1 and 9999" });
      return z.NEVER;
    }
    // Offsets are whole minutes, so the digits below the millisecond carry over unchanged.
    const fraction = /T[\d:]+\.(\d+)/.exec(text)?.[1] ?? "";
    return `${date.toISOString().slice(0, 19)}.${fraction.padEnd(6, "0").slice(0, 6)}Z`;
  });

/** `limit`: a whole number from 1 to `max`, `fallback` when absent. */
export function pageSize(max: number, fallback: number) {
  const message = `must be a whole number from 1 to ${max}`;
  return z
    .string()
    .regex(new RegExp(`^\\d{1,${String(max).length}}$`), message)
    .transform(Number)
    .refine((value) => value >= 1 && value <= max, message)
    .default(fallback);
}

/** `cursor`: a nextCursor this API returned, as the position it stands for. */
export const cursor = z.string().transform((text, context): KeysetCursor => {
  const position = decodeCursor(text);
  if (position === null) {
    context.addIssue({ code: "custom", message: "is not a cursor this API returned (use nextCursor as it came)" });
    return z.NEVER;
  }
  return position;
});

/** `order`: newest first unless asked otherwise. */
export const order = z.enum(["desc", "asc"], { message: "must be desc or asc" }).default("desc");

/** Refuses a cursor read in another order than the query asks for: its position means nothing there. */
export function checkCursorOrder(query: { cursor?: KeysetCursor; order: "desc" | "asc" }, context: z.RefinementCtx): void {
  if (query.cursor && query.cursor.order !== query.order) {
    context.addIssue({ code: "custom", path: ["cursor"], message: `was returned for order=${query.cursor.order}; ask with the same order` });
  }
}
