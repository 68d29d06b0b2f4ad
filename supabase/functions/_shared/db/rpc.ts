/**
 * The `public` SQL functions as the generated types describe them (database.types.ts, `npm run
 * db:types`): every way into them (the service-role pools, supabase-js, the gamification runner,
 * the approval page's visitor) takes a function name that exists, the arguments it declares and
 * answers its declared result, so renaming a SQL function or an argument fails the type check.
 */
import type { SupabaseClient } from "@supabase/supabase-js";
import type { Database, Json } from "./database.types.ts";

type Functions = Database["public"]["Functions"];

/** The name of a `public` SQL function. */
export type RpcName = keyof Functions & string;

/**
 * Named arguments as a function declares them. Any argument may be null (no function here is
 * STRICT: the SQL decides what null means), and a jsonb argument takes any value, which the call
 * sends as JSON: the generated `Json` has an index signature that interfaces lack.
 */
type ArgumentsOf<Declared> = { [Name in keyof Declared]: (Json extends Declared[Name] ? unknown : Declared[Name]) | null };

/** The arguments of `public.<Fn>`. */
export type RpcArgs<Fn extends RpcName> = ArgumentsOf<Functions[Fn]["Args"]>;

/**
 * What `public.<Fn>` answers: its generated type, except that jsonb is `unknown`, for the caller
 * to parse (zod) or to state the shape our SQL builds (one cast where it is read).
 */
export type RpcResult<Fn extends RpcName> = Json extends Functions[Fn]["Returns"] ? unknown : Functions[Fn]["Returns"];

/** Calls `public.<fn>(args)` (arguments by name) and resolves to its result; rejects when the call fails. */
export type Rpc = <Fn extends RpcName>(fn: Fn, args: RpcArgs<Fn>) => Promise<RpcResult<Fn>>;

/** One call, its name and arguments checked together (a route's call, chosen at run time). */
export type RpcCall = { [Fn in RpcName]: { fn: Fn; args: RpcArgs<Fn> } }[RpcName];

/** What a call through PostgREST resolves to: the result, or PostgREST's error and status. */
export type PostgrestAnswer<Fn extends RpcName> =
  | { data: RpcResult<Fn>; error: null; status: number }
  | { data: null; error: { code?: string; message: string }; status: number };

/**
 * Calls `public.<fn>(args)` through PostgREST with supabase-js. supabase-js types a call by a
 * literal name; for a name given as a type parameter its argument and answer types do not resolve,
 * so they are stated here, once, from the same generated types.
 */
export async function postgrestRpc<Fn extends RpcName>(client: SupabaseClient<Database>, fn: Fn, args: RpcArgs<Fn>): Promise<PostgrestAnswer<Fn>> {
  const { data, error, status } = await client.rpc(fn, args as never);
  return error ? { data: null, error, status } : { data: data as RpcResult<Fn>, error: null, status };
}
