/** Query parameters PostgREST reads that do not filter rows. */
const NON_FILTER_PARAMS = new Set(["select", "order", "limit", "offset", "columns", "on_conflict"]);

/**
 * Hosted Supabase preloads pg-safeupdate for PostgREST's role, so an UPDATE or DELETE without a
 * WHERE clause fails with SQLSTATE 21000 (HTTP 400). Debian has no safeupdate package, so the
 * gateway refuses a table PATCH/DELETE that carries no filter, with the same code and message.
 */
export function unfilteredWriteError(method: string, path: string, search: URLSearchParams): Response | null {
  if ((method !== "PATCH" && method !== "DELETE") || path.startsWith("/rpc/")) return null;
  for (const name of search.keys()) {
    if (!NON_FILTER_PARAMS.has(name)) return null;
  }
  const statement = method === "PATCH" ? "UPDATE" : "DELETE";
  return Response.json({ code: "21000", details: null, hint: null, message: `${statement} requires a WHERE clause` }, { status: 400 });
}
