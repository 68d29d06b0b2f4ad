/**
 * Boundary shapes of the gamification API (request bodies, query strings and path values), in one
 * place: the handler, its tests and docs/openapi.yaml agree with these. Field names are the
 * spec's, in Portuguese. Values the database must judge (an action code's existence, coordinate
 * ranges, the check-in time window) are only type-checked here; the SQL functions answer those.
 */
import { z } from "zod";
import { uuidSchema } from "../http/uuid.ts";

/** Any id Postgres stores (http/uuid.ts): seeded and imported ids need not be RFC 9562 version 4. */
const id = uuidSchema("deve ser um UUID");

const limit = z.coerce.number({ message: "deve ser um inteiro" }).int("deve ser um inteiro").min(1, "mínimo 1").max(100, "máximo 100").default(20);
const offset = z.coerce.number({ message: "deve ser um inteiro" }).int("deve ser um inteiro").min(0, "mínimo 0").default(0);

/** Calendar period of the points and category boards. */
const rankingPeriod = z.enum(["semanal", "mensal", "anual", "geral"], { message: "deve ser semanal, mensal, anual ou geral" }).default("mensal");

/** `periodo` of the history: `<N>d`, N from 1 to 365 (default 30d); parsed to a number of days. */
export const historyPeriod = z
  .string()
  .regex(/^\d{1,3}d$/, "deve ter a forma <N>d, por exemplo 30d")
  .transform((value) => Number(value.slice(0, -1)))
  .refine((days) => days >= 1 && days <= 365, "N deve ir de 1 a 365")
  .default(30);

/** POST /points body: the action registration. */
export const scoreBody = z
  .object({
    usuario_id: id,
    acao: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "código de ação em minúsculas, como checkin_pontual"),
    chamado_id: id,
    metadata: z
      .looseObject({
        latitude: z.number({ message: "deve ser um número" }).optional(),
        longitude: z.number({ message: "deve ser um número" }).optional(),
        timestamp_checkin: z.iso.datetime({ offset: true, message: "deve ser uma data-hora ISO 8601" }).optional(),
      })
      .optional(),
  })
  .strict();

/** POST /points/lote body: 1 to 100 action registrations, scored each on its own. */
export const batchBody = z
  .object({ acoes: z.array(scoreBody).min(1, "envie pelo menos 1 registro").max(100, "no máximo 100 registros por lote") })
  .strict();

/** GET /points/history query. */
export const historyQuery = z.object({ usuario_id: id.optional(), periodo: historyPeriod, limit, offset });

/** GET /rankings/local query; without `cidade`, the caller's home city. */
export const localRankingQuery = z.object({
  cidade: z.string().trim().min(1, "não pode ser vazio").max(100, "máximo 100 caracteres").optional(),
  periodo: rankingPeriod,
  limit,
  offset,
});

/** GET /rankings/nacional query; `categoria` filters by level slug (experiente, master_tech, ...). */
export const nationalRankingQuery = z.object({
  categoria: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, "slug de nível, como experiente").optional(),
  periodo: rankingPeriod,
  limit,
  offset,
});

/** GET /rankings/categoria/{categoria} query. */
export const categoryRankingQuery = z.object({ periodo: rankingPeriod, limit, offset });

/** Path value of /badges/user/{usuario_id}. */
export const badgesPath = z.object({ usuario_id: id });

/** One problem in a request, as listed in `error.detalhes`. */
export interface FieldProblem {
  campo: string;
  problema: string;
}

/** Turns zod issues into `detalhes` entries naming the field (`metadata.latitude`) and the problem. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): FieldProblem[] {
  return issues.map((issue) => {
    if (issue.code === "unrecognized_keys") return { campo: issue.keys.join(", "), problema: "campo desconhecido" };
    return { campo: issue.path.map(String).join(".") || "(corpo)", problema: issue.message };
  });
}
