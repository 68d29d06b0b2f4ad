/**
 * The one UUID check of every service. It accepts every value Postgres's `uuid` type can hold, in
 * the canonical text form Postgres itself prints: 8-4-4-4-12 hex digits, either case, any version
 * and variant bits. RFC 9562 validators (zod's `z.uuid()`) refuse ids such as the gamification
 * seed's `402a8bf1-ec9a-c693-...`, which Postgres stores happily; those must pass here.
 *
 * Postgres's input function also takes braces (`{...}`), no hyphens, and hyphens after any group
 * of four digits. The API does not: one spelling per id keeps URLs, logs and cache keys
 * comparable, and Postgres never produces the others, so no client that read an id from us sends
 * them. A refused spelling gets the endpoint's 400, never a 5xx.
 */
import { z } from "zod";

/** The accepted spelling (see the module comment). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID the API accepts. */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_PATTERN.test(value);
}

/** A zod schema for a UUID field; `message` is the service's wording of the problem. */
export function uuidSchema(message = "must be a UUID (8-4-4-4-12 hexadecimal digits)"): z.ZodString {
  return z.string({ message }).regex(UUID_PATTERN, message);
}
