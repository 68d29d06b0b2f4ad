import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { OwnStack, ownStackSlot, STACK_BOOT_MS } from "../helpers/own-stack.ts";
import { until } from "../helpers/until.ts";
import { clusterRunning } from "../../platform/postgres/cluster.ts";
import { isListening } from "../../platform/process/ports.ts";
import { readState } from "../../platform/commands/stack.ts";
import { stackReport } from "../../platform/commands/status.ts";

// This file kills the stack's processes, so it brings up a stack of its own (test/helpers/own-stack.ts).
const config = loadConfig("test", ownStackSlot("supervision"));
const SERVICES = ["postgrest", "platform", "gateway", "functions", "pg-meta", "dashboard", "postgres"] as const;
/**
 * How long one wait (a restart, the load answered again) may take before the test calls it a hang
 * rather than a slow machine: postgres-meta's boot and PostgREST's longest backoff step, several
 * times over.
 */
const RECOVERY_CEILING_MS = 180_000;

/**
 * A steady stream of requests that each record one thing under a key of their own. A request that
 * fails (network error, 5xx) is sent again with the same key until the service answers for it:
 * 2xx the first time it is recorded, 409 when an earlier attempt was recorded but its answer lost.
 */
class RecordingLoad {
  /** Every attempt's status per key (0: no answer). */
  readonly attempts = new Map<string, number[]>();
  /** When the latest request sent after `since` was answered 2xx or 409. */
  private answered: { sentAt: number; at: number }[] = [];
  private readonly pending: Promise<void>[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly name: string,
    private readonly keys: string[],
    private readonly send: (key: string) => Promise<Response>,
  ) {}

  start(everyMs: number): void {
    let next = 0;
    this.timer = setInterval(() => {
      const key = this.keys[next++];
      if (key === undefined) throw new Error(`${this.name}: ran out of keys`);
      this.pending.push(this.record(key));
    }, everyMs);
  }

  /** Stops sending new keys and waits until every key sent so far has been answered. */
  async finish(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.pending);
  }

  /** True once a request sent at or after `since` was answered. */
  answeredSince(since: number): boolean {
    return this.answered.some((answer) => answer.sentAt >= since);
  }

  private async record(key: string): Promise<void> {
    const statuses: number[] = [];
    this.attempts.set(key, statuses);
    for (;;) {
      const sentAt = Date.now();
      let status = 0;
      try {
        const response = await this.send(key);
        await response.arrayBuffer();
        status = response.status;
      } catch {
        // Connection refused or reset while a service restarts: no answer, send it again.
      }
      statuses.push(status);
      if ((status >= 200 && status < 300) || status === 409) {
        this.answered.push({ sentAt, at: Date.now() });
        return;
      }
      if (status !== 0 && status < 500) throw new Error(`${this.name}: ${key} answered ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

describe("supervision: a crashed service is restarted while the rest keeps running", () => {
  let stack: OwnStack;
  let technician: string;
  let owner: string;
  let scoring: RecordingLoad;
  let inserts: RecordingLoad;
  const recovery: Record<string, number> = {};

  beforeAll(async () => {
    stack = await OwnStack.start(config, STACK_BOOT_MS);

    const sql = postgres(config.dbUrl, { max: 1, onnotice: () => {} });
    try {
      const city = `supervisao-${randomUUID().slice(0, 8)}`;
      await sql`select testes_gamificacao.nova_cidade(${city})`;
      [{ technician }] = await sql<{ technician: string }[]>`select testes_gamificacao.novo_tecnico(${city}) as technician`;
      [{ owner }] = await sql<{ owner: string }[]>`select testes_gamificacao.novo_usuario() as owner`;
      const calls = await sql<{ id: string }[]>`select testes_gamificacao.novo_chamado(${technician}) as id from generate_series(1, 1500)`;
      const serviceRole = { authorization: `Bearer ${config.serviceRoleKey}`, apikey: config.serviceRoleKey, "content-type": "application/json" };
      scoring = new RecordingLoad("scoring", calls.map((row) => row.id), (chamado) =>
        fetch(`${config.apiUrl}/api/v1/gamification/points`, {
          method: "POST", headers: serviceRole, signal: AbortSignal.timeout(15_000),
          body: JSON.stringify({ usuario_id: technician, acao: "chamado_concluido", chamado_id: chamado }),
        }));
      inserts = new RecordingLoad("data API inserts", Array.from({ length: 1500 }, () => `supervision-${randomUUID()}`), (name) =>
        fetch(`${config.apiUrl}/rest/v1/demo_projects`, {
          method: "POST", headers: serviceRole, signal: AbortSignal.timeout(15_000),
          body: JSON.stringify({ name, owner_id: owner }),
        }));
    } finally {
      await sql.end();
    }
  }, STACK_BOOT_MS + 60_000);

  afterAll(async () => {
    await stack?.dispose();
  }, 60_000);

  it("restarts each service killed with SIGKILL under load, and the stack answers again once it is back", async () => {
    scoring.start(100);
    inserts.start(100);
    try {
      for (const name of SERVICES) {
        const before = stack.service(name).pid;
        expect(before).toBeGreaterThan(0);
        await until(`steady load before killing ${name}`, () => scoring.answeredSince(Date.now() - 1_000) && inserts.answeredSince(Date.now() - 1_000), RECOVERY_CEILING_MS);
        const killedAt = Date.now();
        process.kill(before as number, "SIGKILL");
        await until(`${name} to be restarted`, () => stack.service(name).state === "running" && stack.service(name).pid !== before, RECOVERY_CEILING_MS);
        const restartedAt = Date.now();
        await until(`both loads to be answered after ${name} came back`, () => scoring.answeredSince(restartedAt) && inserts.answeredSince(restartedAt), RECOVERY_CEILING_MS);
        recovery[name] = Date.now() - killedAt;
      }
    } finally {
      // The next tests read what the load recorded: every key sent must have its answer first.
      await Promise.all([scoring.finish(), inserts.finish()]);
    }
    // How long each took is a figure, not a verdict: on a loaded machine PostgREST's reconnection
    // backoff (1, 2, 4 … 32 s, as under `supabase start`) and postgres-meta's boot stretch it.
    console.log(`supervision: answering again after kill -9 (ms): ${JSON.stringify(recovery)}`);
    expect(Object.keys(recovery)).toEqual([...SERVICES]);
  }, SERVICES.length * RECOVERY_CEILING_MS);

  it("recorded every request answered around the kills exactly once", async () => {
    const sql = postgres(config.dbUrl, { max: 1, onnotice: () => {} });
    try {
      const scored = await sql<{ chamado_id: string; rows: number }[]>`
        select chamado_id, count(*)::int as rows from public.historico_pontos where usuario_id = ${technician} group by chamado_id`;
      const scoredRows = new Map(scored.map((row) => [row.chamado_id, row.rows]));
      // Each key answered once recorded exactly once; a first attempt never finds it recorded already.
      const wrongScores = [...scoring.attempts].map(([chamado, statuses]) => ({ chamado, statuses, rows: scoredRows.get(chamado) ?? 0 }))
        .filter(({ statuses, rows }) => rows !== 1 || statuses[0] === 409);
      expect(wrongScores).toEqual([]);
      expect(scored).toHaveLength(scoring.attempts.size);
      const [totals] = await sql<{ total: number; ledger: number }[]>`
        select t.pontos_total as total, (select coalesce(sum(pontos_final), 0)::int from public.historico_pontos where usuario_id = t.id) as ledger
        from public.tecnicos t where t.id = ${technician}`;
      expect(totals.total).toBe(totals.ledger);

      const names = [...inserts.attempts.keys()];
      const inserted = await sql<{ name: string; rows: number }[]>`
        select name, count(*)::int as rows from public.demo_projects where name = any(${names}) group by name`;
      const insertedRows = new Map(inserted.map((row) => [row.name, row.rows]));
      const wrongInserts = [...inserts.attempts].map(([name, statuses]) => ({ name, statuses, rows: insertedRows.get(name) ?? 0 }))
        .filter(({ statuses, rows }) => rows !== 1 || statuses[0] === 409);
      expect(wrongInserts).toEqual([]);
      // The load really ran through the outages: some attempts went unanswered and were retried.
      expect([...scoring.attempts.values(), ...inserts.attempts.values()].some((statuses) => statuses.length > 1)).toBe(true);
    } finally {
      await sql.end();
    }
  });

  it("shows each service's restarts and why it last died in the status report", async () => {
    const report = await stackReport(config);
    expect(report.running).toBe(true);
    for (const name of SERVICES) {
      const status = report.services.find((candidate) => candidate.name === name);
      expect(status).toMatchObject({ state: "running", listening: true });
      expect(status?.restarts).toBeGreaterThanOrEqual(1);
      expect(status?.lastExit?.reason).toMatch(name === "postgres" ? /the postmaster \(pid \d+\) is gone/ : /signal SIGKILL/);
    }
    expect(stack.log).toMatch(/postgrest died \(signal SIGKILL\); restarting it in/);
  });

  it("stops everything, Postgres included, on SIGTERM (what npm stop sends)", async () => {
    await stack.stop(RECOVERY_CEILING_MS);
    expect(stack.exitCode).toBe(0);
    const { ports } = config;
    for (const port of [ports.gateway, ports.gatewayInner, ports.mail, ports.postgrest, ports.functions, ports.pgMeta, ports.studio, ports.db]) expect(await isListening(port)).toBe(false);
    expect(clusterRunning(config)).toBe(false);
    expect(readState(config)).toBeNull();
  }, RECOVERY_CEILING_MS + 10_000);
});
