/**
 * Calls a public.gamificacao_* SQL function through PostgREST as the caller and reads its answer.
 * Each function answers {status, data | error, limite}; PostgREST's own failures (a bad or expired
 * JWT is PGRST301, 401) become envelope errors here.
 */
import { z } from "zod";
import type { RpcArgs, RpcCall, RpcName } from "../db/rpc.ts";
import type { HttpError } from "../http/errors.ts";
import { apiError, type RateLimitState } from "./envelope.ts";
import { gamificationErrors, gamificationLog } from "./errors.ts";

/** What supabase-js's `rpc()` resolves to, reduced to what this module reads. */
export interface PostgrestResult {
  data: unknown;
  error: { code?: string; message: string } | null;
  status: number;
}

/** Runs one SQL function with the caller's credentials (supabase-js `rpc`, or a fake in tests). */
export type RpcRunner = <Fn extends RpcName>(fn: Fn, args: RpcArgs<Fn>) => PromiseLike<PostgrestResult>;

/** The outcome of a call: the data to send, or the error, with the caller's rate-limit state. */
export type RpcOutcome =
  | { ok: true; data: unknown; limit: RateLimitState | null }
  | { ok: false; error: HttpError; limit: RateLimitState | null };

const rpcAnswer = z.object({
  status: z.number().int(),
  data: z.unknown().optional(),
  error: z.object({ codigo: z.string(), mensagem: z.string(), detalhes: z.unknown().optional() }).optional(),
  limite: z.object({ limite: z.number(), restante: z.number(), reinicio: z.string(), retry_after: z.number() }).nullable(),
});

/** Maps a PostgREST error (the JWT was refused, or the role lacks a grant) to the envelope. */
function fromPostgrest(result: PostgrestResult): HttpError {
  const message = result.error?.message ?? "";
  if (result.status === 401) return gamificationErrors.describe({ kind: /expired/i.test(message) ? "expired_token" : "invalid_token", reason: message });
  if (result.status === 403) return apiError(403, "SEM_PERMISSAO", "Sem permissão para esta operação.");
  gamificationLog.error("rpc_failed", { status: result.status, code: result.error?.code, reason: message });
  return gamificationErrors.describe({ kind: "internal" });
}

/** Calls `call.fn` and returns its outcome; never throws for an answer PostgREST gave. */
export async function runRpc(run: RpcRunner, call: RpcCall): Promise<RpcOutcome> {
  const result = await run(call.fn, call.args);
  if (result.error) return { ok: false, error: fromPostgrest(result), limit: null };
  const answer = rpcAnswer.safeParse(result.data);
  if (!answer.success) {
    gamificationLog.error("rpc_unexpected_answer", { fn: call.fn });
    return { ok: false, error: gamificationErrors.describe({ kind: "internal" }), limit: null };
  }
  const { status, data, error, limite } = answer.data;
  if (status === 200) return { ok: true, data, limit: limite };
  return {
    ok: false,
    error: apiError(status, error?.codigo ?? "ERRO_INTERNO", error?.mensagem ?? "Erro inesperado.", error?.detalhes),
    limit: limite,
  };
}
