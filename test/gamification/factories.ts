/**
 * Factories for the gamification end-to-end suites: cities, technicians (real auth users with a
 * session), calls and GPS readings, created the way the back office would (service role), so a
 * test states only what matters to it. Each call creates fresh rows, so suites never collide with
 * the seed or with each other.
 */
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { createTestUser, serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

/** Where factory calls take place (São Paulo's centre). */
export const LOCAL = { latitude: -23.55, longitude: -46.63 };

/** A signed-in technician. */
export interface Technician extends TestUser {
  cidadeId: string;
}

/** A new city with a unique id (and the given name), returning its id. */
export async function createCity(nome = `Cidade ${randomUUID().slice(0, 8)}`): Promise<string> {
  const id = `teste-${randomUUID().slice(0, 12)}`;
  const { error } = await serviceClient().from("cidades").insert({ id, nome, uf: "TS" });
  if (error) throw error;
  return id;
}

/** A new auth user registered by the back office as a technician of `cidadeId`, signed in. */
export async function createTechnician(cidadeId: string, nome = "Técnica de Teste"): Promise<Technician> {
  const user = await createTestUser();
  const { error } = await serviceClient().from("tecnicos").insert({ id: user.id, nome, cidade_id: cidadeId });
  if (error) throw error;
  return { ...user, cidadeId };
}

/** Options of a call; by default concluded, scheduled two hours ago, checked in on time. */
export interface CallOptions {
  status?: "agendado" | "em_andamento" | "concluido" | "cancelado";
  agendadoPara?: Date;
  estrelas?: number;
  urgente?: boolean;
}

/** A call of `technician` in their city at LOCAL, returning its id. */
export async function createCall(technician: Technician, options: CallOptions = {}): Promise<string> {
  const status = options.status ?? "concluido";
  const agendado = options.agendadoPara ?? new Date(Date.now() - 2 * 3600_000);
  const started = status === "em_andamento" || status === "concluido";
  const { data, error } = await serviceClient()
    .from("chamados")
    .insert({
      tecnico_id: technician.id,
      cidade_id: technician.cidadeId,
      ...LOCAL,
      urgente: options.urgente ?? false,
      agendado_para: agendado.toISOString(),
      aceito_em: new Date(agendado.getTime() - 86_400_000).toISOString(),
      checkin_em: started ? agendado.toISOString() : null,
      checkout_em: status === "concluido" ? new Date(agendado.getTime() + 3600_000).toISOString() : null,
      status,
      cancelado_em: status === "cancelado" ? agendado.toISOString() : null,
      cancelado_por: status === "cancelado" ? "tecnico" : null,
      estrelas: options.estrelas ?? null,
    })
    .select("id")
    .single();
  if (error) throw error;
  return data.id as string;
}

/** metadata of a GPS reading `metersNorth` of LOCAL, taken at `at`. */
export function reading(at: Date, metersNorth = 0): { latitude: number; longitude: number; timestamp_checkin: string } {
  return { latitude: LOCAL.latitude + metersNorth / 111_195, longitude: LOCAL.longitude, timestamp_checkin: at.toISOString() };
}

/**
 * Runs what pg_cron runs (category refresh, daily snapshot) right now, as the database owner:
 * tests cannot wait for the schedule.
 */
export async function runJob(job: "atualizar_rankings_categorias" | "capturar_snapshots"): Promise<void> {
  const sql = postgres(env.dbUrl, { max: 1, onnotice: () => {} });
  try {
    if (job === "atualizar_rankings_categorias") await sql`select gamificacao.atualizar_rankings_categorias(now(), true)`;
    else await sql`select gamificacao.capturar_snapshots()`;
  } finally {
    await sql.end();
  }
}
