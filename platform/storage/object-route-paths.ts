/**
 * Path patterns of the `/object` routes, relative to `/object`. A bucket segment may be empty and
 * the object name is the rest of the path (possibly empty), as Storage's router takes them; the
 * handlers decode both from the raw path (object-keys.ts), never from Hono's params, so an encoded
 * "/" stays part of a name.
 */

/** One bucket segment, possibly empty. */
export const BUCKET = ":bucket{[^/]*}";

/** The object name: everything after the bucket's slash, possibly empty. */
export const NAME = ":name{.*}";

/** The raw pathname of a request, which the handlers split themselves. */
export function rawPath(request: Request): string {
  return new URL(request.url).pathname;
}
