/**
 * Faults under mixed load, on a supervised stack of its own (test/helpers/own-stack.ts): while
 * synchronous and queued workflow runs, completion webhooks and gamification scoring flow, the
 * functions host (where the queue workers' functions run), PostgREST and the platform process (the
 * gateway and the queue dispatcher) are killed with SIGKILL, then Postgres. Clients retry
 * what got no answer with the same Idempotency-Key (or the same call), as documented, and the
 * sweeper is never run ahead: a sync run cut off mid-run holds its key only for its short lease.
 * Afterwards:
 * - every run that was accepted is recorded once, under the execution id its answer named, and
 *   ended, charged at most once (exactly once when it completed);
 * - every completion webhook that was queued arrived at the receiver;
 * - no call was scored twice, and each technician's total and badge count match their ledger;
 * - the stack answered again after every fault with no manual step.
 */
import { randomUUID } from "node:crypto";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { fetchFrom } from "../helpers/clients.ts";
import { OwnStack, ownStackSlot, STACK_BOOT_MS } from "../helpers/own-stack.ts";
import { until } from "../helpers/until.ts";
import { WebhookReceiver } from "../stand-ins/webhook-receiver.ts";

const config = loadConfig("test", ownStackSlot("faultsUnderLoad"));
/** The seeded, deployed Hello API workflow and the builder's local demo key (supabase/seeds). */
const WORKFLOW = "f5000000-0000-4000-8000-000000000003";
const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
/** A short lease, so a queued run whose worker died is taken again in seconds, not two minutes. */
const LEASE_SECONDS = 4;
/**
 * The faults, in order: the functions host (the `api` function and the queue workers' functions),
 * PostgREST and the platform process (the gateway and the queue dispatcher) at once, then Postgres.
 */
const FAULTS: readonly (readonly string[])[] = [["functions", "postgrest", "platform"], ["postgres"]];

/** Client addresses taken in turn, so the gateway's per-caller budget never answers for the load. */
const devices = Array.from({ length: 24 }, (_, index) => fetchFrom(`127.70.${Number(process.env.ORBITA_TEST_SLOT ?? 0)}.${index + 1}`));
let turn = 0;
const device = () => devices[turn++ % devices.length];

/** What one client request finally got. */
interface Outcome {
  statuses: number[];
  executionId?: string;
  /** Whether the client gave up waiting on an attempt (its own timeout), hanging up on it. */
  hungUp?: boolean;
}

/** What a client does with an answer. */
type Verdict = "final" | "retry";

/**
 * A steady stream of requests, one per key; a request with no answer (the connection failed, a
 * 5xx from the platform while a service restarts, or 409 while the first attempt still runs) is
 * sent again with the same key until it gets a final answer.
 */
class Load {
  readonly outcomes = new Map<string, Outcome>();
  private readonly answeredAt: number[] = [];
  private readonly pending: Promise<void>[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private next = 0;

  constructor(
    readonly name: string,
    private readonly keys: () => string,
    private readonly send: (key: string) => Promise<Response>,
    /** Whether the client stops at an answer or sends the request again. */
    private readonly verdict: (status: number, body: string) => Verdict,
  ) {}

  start(everyMs: number): void {
    this.timer = setInterval(() => {
      if (this.next++ < 2_000) this.pending.push(this.record(this.keys()));
    }, everyMs);
  }

  async finish(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.pending);
  }

  /** Whether a request sent at or after `since` got its final answer. */
  answeredSince(since: number): boolean {
    return this.answeredAt.some((sentAt) => sentAt >= since);
  }

  private async record(key: string): Promise<void> {
    const outcome: Outcome = { statuses: [] };
    this.outcomes.set(key, outcome);
    for (let attempt = 0; attempt < 400; attempt++) {
      const sentAt = Date.now();
      let status = 0;
      let body = "";
      try {
        const response = await this.send(key);
        body = await response.text();
        status = response.status;
        outcome.executionId = response.headers.get("x-execution-id") ?? outcome.executionId;
      } catch (error) {
        // Refused or reset while a service restarts, or the client's own timeout: no answer.
        if (error instanceof DOMException && error.name === "TimeoutError") outcome.hungUp = true;
      }
      outcome.statuses.push(status);
      const verdict = status === 0 ? "retry" : this.verdict(status, body);
      if (verdict !== "retry") {
        this.answeredAt.push(sentAt);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`${this.name}: ${key} got no final answer: ${outcome.statuses.join(",")}`);
  }
}

/** A platform's "try again": no service answered for the request. */
const unanswered = (status: number) => status === 502 || status === 503 || status === 504 || status === 546;

describe("faults under mixed load", () => {
  let stack: OwnStack;
  let sql: Sql;
  let receiver: WebhookReceiver;
  let technician: string;
  let loads: Load[];
  const recovery: Record<string, number> = {};

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([OwnStack.start(config, STACK_BOOT_MS), WebhookReceiver.start()]);
    sql = postgres(config.dbUrl, { max: 2, onnotice: () => {} });
    await sql`update platform.queue_workers set visibility_timeout = ${LEASE_SECONDS} where queue_name = 'workflow_runs'`;
    await sql`insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, usage_limit, concurrent_runs)
      select billing_account_id, 100000, 100000, 100000, 1000 from public.workspaces w join public.workflows f on f.workspace_id = w.id where f.id = ${WORKFLOW}
      on conflict (billing_account_id) do update set sync_per_minute = 100000, async_per_minute = 100000, usage_limit = 100000, concurrent_runs = 1000`;
    await sql.begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
      await tx`update public.webhook_subscriptions set active = false`;
      await tx`insert into public.webhook_subscriptions (workflow_id, url) values (${WORKFLOW}, ${receiver.url("/faults")})`;
    });
    const city = `falhas-${randomUUID().slice(0, 8)}`;
    await sql`select testes_gamificacao.nova_cidade(${city})`;
    [{ technician }] = await sql<{ technician: string }[]>`select testes_gamificacao.novo_tecnico(${city}) as technician`;
    const calls = (await sql<{ id: string }[]>`select testes_gamificacao.novo_chamado(${technician}) as id from generate_series(1, 2000)`).map((row) => row.id);

    const execute = (mode: "sync" | "async") => (key: string) =>
      device()(`${config.apiUrl}/api/workflows/${WORKFLOW}/execute`, {
        method: "POST",
        headers: { "x-api-key": DEMO_KEY, "idempotency-key": key, "x-execution-mode": mode, "content-type": "application/json" },
        body: JSON.stringify({ name: "Falha" }),
        signal: AbortSignal.timeout(20_000),
      });
    // A platform's "try again" is retried, and so is 409 IDEMPOTENCY_KEY_IN_USE: an attempt was
    // admitted and has not ended. When its function or database went away mid-run, that lasts only
    // until its short lease runs out (run-lease.ts); the retry after it gets the recorded ending.
    // Anything else is the answer.
    const runVerdict = (status: number, body: string): Verdict =>
      (unanswered(status) || (status === 409 && body.includes("IDEMPOTENCY_KEY_IN_USE")) ? "retry" : "final");
    const serviceRole = { authorization: `Bearer ${config.serviceRoleKey}`, apikey: config.serviceRoleKey, "content-type": "application/json" };
    let call = 0;
    loads = [
      new Load("sync runs", () => `sync-${randomUUID()}`, execute("sync"), runVerdict),
      new Load("queued runs", () => `async-${randomUUID()}`, execute("async"), runVerdict),
      new Load("scoring", () => calls[call++], (chamado) =>
        device()(`${config.apiUrl}/api/v1/gamification/points`, {
          method: "POST", headers: serviceRole, signal: AbortSignal.timeout(20_000),
          body: JSON.stringify({ usuario_id: technician, acao: "chamado_concluido", chamado_id: chamado }),
        }), (status) => (status < 500 ? "final" : "retry")),
    ];
  }, STACK_BOOT_MS + 60_000);

  afterAll(async () => {
    await sql?.end();
    await receiver?.stop();
    await stack?.dispose();
  }, 60_000);

  it("recovers from each fault without a manual step while the load runs", async () => {
    for (const load of loads) load.start(150);
    for (const names of FAULTS) {
      await until(`steady load before killing ${names.join(" and ")}`, () => loads.every((load) => load.answeredSince(Date.now() - 2_000)), 60_000);
      const killedAt = Date.now();
      const before = names.map((name) => stack.service(name).pid as number);
      for (const pid of before) process.kill(pid, "SIGKILL");
      await until(`${names.join(" and ")} to be restarted`, () => names.every((name, index) => stack.service(name).state === "running" && stack.service(name).pid !== before[index]), 60_000);
      const restartedAt = Date.now();
      await until(`every load to be answered after ${names.join(" and ")} came back`, () => loads.every((load) => load.answeredSince(restartedAt)), 60_000);
      recovery[names.join("+")] = Date.now() - killedAt;
    }
    console.log(`faults under load: answering again after kill -9 (ms): ${JSON.stringify(recovery)}; requests: ${loads.map((load) => `${load.name} ${load.outcomes.size}`).join(", ")}`);
    await Promise.all(loads.map((load) => load.finish()));
    // The load really ran through the outages: some requests got no answer and were sent again.
    expect(loads.some((load) => [...load.outcomes.values()].some((outcome) => outcome.statuses.length > 1))).toBe(true);
  }, 240_000);

  it("recorded every accepted run once, under the id its answer named, and ended it", async () => {
    const [sync, queued] = loads;
    // Queued runs whose worker died are taken again after their lease; wait for them all to end.
    const queuedIds = [...queued.outcomes.values()].flatMap((outcome) => outcome.executionId ?? []);
    await until("every queued run to end", async () => {
      const [{ open }] = await sql<{ open: number }[]>`select count(*)::int as open from public.workflow_executions where id = any(${queuedIds}::uuid[]) and status in ('queued', 'running')`;
      return open === 0;
    }, 120_000, 500);
    const accepted = [...sync.outcomes, ...queued.outcomes].filter(([, outcome]) => outcome.executionId !== undefined);
    expect(accepted.length).toBeGreaterThan(0);
    // Every final answer of a run names its execution (a Response block answer, a 202, or a recorded failure).
    const unnamed = [...sync.outcomes, ...queued.outcomes].filter(([, outcome]) => outcome.executionId === undefined).map(([key, outcome]) => `${key}: ${outcome.statuses.join(",")}`);
    expect(unnamed).toEqual([]);
    const keys = accepted.map(([key]) => key);
    const recorded = await sql<{ key: string; execution_id: string; status: string; error: unknown; attempt: number; charges: number }[]>`
      select k.key, k.execution_id, x.status::text, x.error_code || coalesce(': ' || x.error_message, '') as error, x.attempt, (select count(*)::int from public.usage_ledger l where l.execution_id = k.execution_id) as charges
      from workflows_private.idempotency_keys k join public.workflow_executions x on x.id = k.execution_id
      where k.workflow_id = ${WORKFLOW} and k.key = any(${keys})`;
    const byKey = new Map(recorded.map((row) => [row.key, row]));
    const wrong = accepted.flatMap(([key, outcome]) => {
      const row = byKey.get(key);
      if (!row) return [`${key}: not recorded (${outcome.statuses.join(",")})`];
      if (row.execution_id !== outcome.executionId) return [`${key}: answered ${outcome.executionId}, recorded ${row.execution_id}`];
      // A client that hangs up cancels its synchronous run (docs/workflows-api.md); only this
      // client's own timeout does that here, while a restarting database held its run up.
      const endings = outcome.hungUp && key.startsWith("sync-") ? ["completed", "failed", "cancelled"] : ["completed", "failed"];
      if (!endings.includes(row.status)) return [`${key}: ${row.status} (${outcome.statuses.join(",")})`];
      if (row.charges > 1 || (row.status === "completed" && row.charges !== 1)) return [`${key}: ${row.status} with ${row.charges} charges`];
      return [];
    });
    expect(wrong).toEqual([]);
    // A queued run is never given up for a fault: the one it met sends it back to the queue, and a
    // later attempt completes it. (A synchronous run cut off mid-run ends failed: its client was told;
    // one whose client hung up ends cancelled.)
    const lost = recorded.filter((row) => row.key.startsWith("async-") && row.status !== "completed").map((row) => `${row.key}: ${row.status} ${row.error} (attempt ${row.attempt})`);
    expect(lost).toEqual([]);
    const cutShort = recorded.filter((row) => row.status !== "completed").map((row) => `${row.key}: ${row.error} (attempt ${row.attempt})`);
    if (cutShort.length > 0) console.log(`faults under load: synchronous runs cut off or hung up on: ${cutShort.join("; ")}`);
    // Nothing of the load is left running.
    const [{ open }] = await sql<{ open: number }[]>`select count(*)::int as open from public.workflow_executions where workflow_id = ${WORKFLOW} and status in ('queued', 'running')`;
    expect(open).toBe(0);
  }, 180_000);

  it("delivered every queued completion webhook", async () => {
    const executions = [...loads[0].outcomes.values(), ...loads[1].outcomes.values()].flatMap((outcome) => outcome.executionId ?? []);
    let deliveries: { id: string; status: string }[] = [];
    await until("every delivery to be delivered", async () => {
      deliveries = await sql<{ id: string; status: string }[]>`select id, status::text from public.webhook_deliveries where execution_id = any(${executions}::uuid[])`;
      return deliveries.every((delivery) => delivery.status !== "pending");
    }, 120_000, 500);
    const [{ ended }] = await sql<{ ended: number }[]>`select count(*)::int as ended from public.workflow_executions where id = any(${executions}::uuid[]) and status <> 'queued' and status <> 'running'`;
    expect(deliveries).toHaveLength(ended);
    const arrived = new Set(receiver.arrivals("/faults").map((arrival) => arrival.deliveryId));
    expect(deliveries.filter((delivery) => delivery.status !== "delivered" || !arrived.has(delivery.id))).toEqual([]);
  }, 150_000);

  it("scored no call twice, and the technician's totals match the ledger", async () => {
    const scoring = loads[2];
    const rows = await sql<{ chamado_id: string; rows: number }[]>`select chamado_id, count(*)::int as rows from public.historico_pontos where usuario_id = ${technician} group by chamado_id`;
    const counts = new Map(rows.map((row) => [row.chamado_id, row.rows]));
    // Answered 200 once recorded once; 409 ACAO_DUPLICADA only when an earlier attempt's answer was lost.
    const wrong = [...scoring.outcomes].filter(([chamado, outcome]) => counts.get(chamado) !== 1 || outcome.statuses[0] === 409 || ![200, 409].includes(outcome.statuses.at(-1) as number));
    expect(wrong.map(([chamado, outcome]) => `${chamado}: ${outcome.statuses.join(",")} → ${counts.get(chamado) ?? 0} rows`)).toEqual([]);
    expect(rows).toHaveLength(scoring.outcomes.size);
    const [totals] = await sql<{ total: number; ledger: number; badges: number; held: number }[]>`
      select t.pontos_total as total, (select coalesce(sum(pontos_final), 0)::int from public.historico_pontos where usuario_id = t.id) as ledger,
        t.badges_count as badges, (select count(*)::int from public.usuario_badges where usuario_id = t.id) as held
      from public.tecnicos t where t.id = ${technician}`;
    expect(totals.total).toBe(totals.ledger);
    expect(totals.badges).toBe(totals.held);
  });
});
