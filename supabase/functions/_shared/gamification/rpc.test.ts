import { describe, expect, it, vi } from "vitest";
import type { RpcCall } from "../db/rpc.ts";
import { runRpc, type PostgrestResult } from "./rpc.ts";

const call: RpcCall = { fn: "gamificacao_ranking_local", args: { p_periodo: "mensal" } };
const limite = { limite: 120, restante: 119, reinicio: "2026-11-21T10:00:00-03:00", retry_after: 0, permitido: true };

function runner(result: PostgrestResult) {
  return vi.fn(async () => result);
}

describe("runRpc", () => {
  it("passes the function name and arguments through", async () => {
    const run = runner({ data: { status: 200, data: {}, limite }, error: null, status: 200 });
    await runRpc(run, call);
    expect(run).toHaveBeenCalledWith("gamificacao_ranking_local", { p_periodo: "mensal" });
  });

  it("returns the data and the rate-limit state of a 200 answer", async () => {
    const outcome = await runRpc(runner({ data: { status: 200, data: { ranking: [] }, limite }, error: null, status: 200 }), call);
    const { permitido: _permitido, ...state } = limite;
    expect(outcome).toEqual({ ok: true, data: { ranking: [] }, limit: state });
  });

  it("turns an error answer into an HttpError with its status and details", async () => {
    const answer = { status: 404, error: { codigo: "CIDADE_NAO_ENCONTRADA", mensagem: "Cidade não encontrada.", detalhes: { cidade: "x" } }, limite: null };
    const outcome = await runRpc(runner({ data: answer, error: null, status: 200 }), call);
    expect(outcome).toMatchObject({
      ok: false,
      error: { status: 404, code: "CIDADE_NAO_ENCONTRADA", message: "Cidade não encontrada.", details: { cidade: "x" } },
      limit: null,
    });
  });

  it("maps PostgREST's expired-JWT error (PGRST301) to 401 NAO_AUTENTICADO", async () => {
    const outcome = await runRpc(runner({ data: null, error: { code: "PGRST301", message: "JWT expired" }, status: 401 }), call);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error).toMatchObject({ status: 401, code: "NAO_AUTENTICADO", message: expect.stringMatching(/expirou/) });
  });

  it("maps a missing grant (42501 as a signed-in role) to 403 SEM_PERMISSAO", async () => {
    const outcome = await runRpc(runner({ data: null, error: { code: "42501", message: "permission denied" }, status: 403 }), call);
    expect(!outcome.ok && outcome.error.code).toBe("SEM_PERMISSAO");
  });

  it("hides anything else behind 500 ERRO_INTERNO", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const outcome = await runRpc(runner({ data: null, error: { code: "57014", message: "canceling statement" }, status: 500 }), call);
    expect(!outcome.ok && outcome.error).toMatchObject({ status: 500, code: "ERRO_INTERNO" });
    const odd = await runRpc(runner({ data: "surprise", error: null, status: 200 }), call);
    expect(!odd.ok && odd.error.code).toBe("ERRO_INTERNO");
    expect(errors).toHaveBeenCalledTimes(2);
    errors.mockRestore();
  });
});
