/**
 * Calls a public.gamificacao_* SQL function through PostgREST as the caller and reads its answer.
 * Each function answers {status, data | error, limite}; PostgREST's own failures (a bad or expired
 * JWT is PGRST301, 401) become envelope errors here.
 */
import { z } from "zod";
import { apiError, type ApiError, type RateLimitState } from "./envelope.ts";
import { logEvent } from "./log.ts";
import type { RpcCall } from "./routes.ts";

/** What supabase-js's `rpc()` resolves to, reduced to what this module reads. */
export interface PostgrestResult {
  data: unknown;
  error: { code?: string; message: string } | null;
  status: number;
}

/** Runs one SQL function with the caller's credentials (supabase-js `rpc`, or a fake in tests). */
export type RpcRunner = (fn: string, args: Record<string, unknown>) => PromiseLike<PostgrestResult>;

/** The outcome of a call: the data to send, or the error, with the caller's rate-limit state. */
export type RpcOutcome =
  | { ok: true; data: unknown; limit: RateLimitState | null }
  | { ok: false; error: ApiError; limit: RateLimitState | null };

const rpcAnswer = z.object({
  status: z.number().int(),
  data: z.unknown().optional(),
  error: z.object({ codigo: z.string(), mensagem: z.string(), detalhes: z.unknown().optional() }).optional(),
  limite: z.object({ limite: z.number(), restante: z.number(), reinicio: z.string(), retry_after: z.number() }).nullable(),
});

/** Maps a PostgREST error (the JWT was refused, or the role lacks a grant) to the envelope. */
function fromPostgrest(result: PostgrestResult): ApiError {
  const message = result.error?.message ?? "";
  if (result.status === 401) {
    const expired = /expired/i.test(message);
    return apiError(401, "NAO_AUTENTICADO", expired ? "O token (JWT) expirou; entre de novo." : "Token (JWT) inválido ou sem permissão de acesso.", {
      motivo: message,
    });
  }
  if (result.status === 403) return apiError(403, "SEM_PERMISSAO", "Sem permissão para esta operação.");
  logEvent("error", "gamification rpc failed", { status: result.status, code: result.error?.code, message });
  return apiError(500, "ERRO_INTERNO", "Erro inesperado; tente de novo.");
}

/** Calls `call.fn` and returns its outcome; never throws for an answer PostgREST gave. */
export async function runRpc(run: RpcRunner, call: RpcCall): Promise<RpcOutcome> {
  const result = await run(call.fn, call.args);
  if (result.error) return { ok: false, error: fromPostgrest(result), limit: null };
  const answer = rpcAnswer.safeParse(result.data);
  if (!answer.success) {
    logEvent("error", "gamification rpc answered an unexpected shape", { fn: call.fn });
    return { ok: false, error: apiError(500, "ERRO_INTERNO", "Erro inesperado; tente de novo."), limit: null };
  }
  const { status, data, error, limite } = answer.data;
  if (status === 200) return { ok: true, data, limit: limite };
  return {
    ok: false,
    error: apiError(status, error?.codigo ?? "ERRO_INTERNO", error?.mensagem ?? "Erro inesperado.", error?.detalhes),
    limit: limite,
  };
}
