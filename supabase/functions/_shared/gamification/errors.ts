/**
 * How the gamification API words the toolkit's problems (Portuguese codes and messages, the
 * `detalhes` list of `{campo, problema}`), renders errors in its envelope, and logs.
 */
import type { Problem, ServiceErrors } from "../http/errors.ts";
import { createLogger } from "../http/logger.ts";
import { apiError, errorResponse } from "./envelope.ts";
import { describeIssues } from "./schemas.ts";

/** The largest JSON body accepted (an action registration is a few hundred bytes). */
export const MAX_BODY_BYTES = 16 * 1024;

/** The gamification API's one logger. Only unexpected failures are logged; a 4xx leaves no line. */
export const gamificationLog = createLogger("gamification");

function describe(problem: Problem) {
  switch (problem.kind) {
    case "not_found":
      return apiError(404, "ROTA_NAO_ENCONTRADA", `Não há rota ${problem.path}.`);
    case "method_not_allowed":
      return apiError(405, "METODO_NAO_PERMITIDO", `Use ${problem.allowed.join(" ou ")} em ${problem.path}.`);
    case "unsupported_media_type":
      return apiError(415, "TIPO_NAO_SUPORTADO", "Envie o corpo como application/json.");
    case "body_too_large":
      return apiError(413, "CORPO_MUITO_GRANDE", `O corpo passa de ${problem.limit} bytes.`);
    case "malformed_json":
      return apiError(400, "PARAMETRO_INVALIDO", "O corpo não é JSON válido.");
    case "nested_too_deep":
      return apiError(400, "PARAMETRO_INVALIDO", "Corpo inválido.", [
        { campo: "(corpo)", problema: `aninha listas e objetos em mais de ${problem.limit} níveis` },
      ]);
    case "unstorable_text":
      return apiError(400, "PARAMETRO_INVALIDO", `${problem.part === "body" ? "Corpo" : "Parâmetro"} inválido.`, [
        { campo: problem.field, problema: "contém um caractere nulo (NUL) ou texto que não é UTF-8 válido" },
      ]);
    case "invalid_input":
      return apiError(400, "PARAMETRO_INVALIDO", `${problem.part === "body" ? "Corpo" : "Parâmetro"} inválido.`, describeIssues(problem.issues));
    case "missing_credentials":
      return apiError(401, "NAO_AUTENTICADO", "Envie Authorization: Bearer <JWT> de uma sessão Supabase.");
    case "expired_token":
      return apiError(401, "NAO_AUTENTICADO", "O token (JWT) expirou; entre de novo.", { motivo: problem.reason });
    case "invalid_token":
      return apiError(401, "NAO_AUTENTICADO", "Token (JWT) inválido ou sem permissão de acesso.", { motivo: problem.reason });
    case "internal":
      return apiError(500, "ERRO_INTERNO", "Erro inesperado; tente de novo.");
  }
}

/** The gamification API's errors: its wording of the toolkit's problems and its envelope. */
export const gamificationErrors: ServiceErrors = { describe, render: (error) => errorResponse(error) };
