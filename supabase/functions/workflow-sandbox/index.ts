// User code of workflow runs, for runtimes without Web Workers (hosted Supabase, `supabase start`):
// the `api` function posts each Function, Condition or Router call here, so CPU-bound code runs in
// this function's isolate, never in the one serving the API. Service role only (verify_jwt on).
import { serveSandboxRequest } from "../_shared/workflows/sandbox/remote-sandbox.ts";

Deno.serve(serveSandboxRequest);
