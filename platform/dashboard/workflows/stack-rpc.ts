import { DashboardError } from "../errors.ts";
import type { StackClient } from "../stack-client.ts";

/** A row's id from a path, refused as "no such" (404) before it reaches the data API when it is not a UUID. */
export function checkId(id: string, what: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw new DashboardError(404, `There is no ${what} ${id}`);
  return id;
}

/** Calls a SQL function through the data API, as supabase.rpc does. */
export async function rpc<T>(stack: StackClient, name: string, args: Record<string, unknown>): Promise<T> {
  return await stack.json<T>(`/rest/v1/rpc/${name}`, { method: "POST", json: args });
}

/**
 * How many rows of `table` match `filter` (a PostgREST query such as `workflow_id=eq.…`), from the
 * data API's exact count, so a confirmation can say what a delete takes with it without reading it.
 */
export async function countRows(stack: StackClient, table: string, filter: string): Promise<number> {
  const response = await stack.fetch(`/rest/v1/${table}?select=*&${filter}&limit=1`, { method: "HEAD", headers: { prefer: "count=exact" } });
  const total = /\/(\d+)$/.exec(response.headers.get("content-range") ?? "")?.[1];
  return total === undefined ? 0 : Number(total);
}
