import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { until } from "../helpers/until.ts";

// test/fixtures/functions-and-workers.sql registers two queues drained by the fixture-queue-worker
// function: fixture_jobs (visibility timeout 30 s) and fixture_crashy (2 s). The function records
// every handling in test_fixtures.queue_runs.
const sql = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
afterAll(() => sql.end());

interface Run {
  msg_id: string;
  read_ct: number;
  outcome: "processed" | "crashed";
  enqueued_at: Date;
  processed_at: Date;
}

async function runsOf(label: string): Promise<Run[]> {
  return sql<Run[]>`
    select msg_id, read_ct, outcome, enqueued_at, processed_at
    from test_fixtures.queue_runs where label = ${label} order by id
  `;
}

async function waitForRuns(label: string, predicate: (runs: Run[]) => boolean, timeoutMs: number): Promise<Run[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = await runsOf(label);
    if (predicate(runs)) return runs;
    if (Date.now() > deadline) throw new Error(`timed out waiting for queue runs of ${label}: ${JSON.stringify(runs)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function send(queue: string, message: Record<string, string | boolean>, delaySeconds = 0): Promise<{ msgId: string; visibleAt: Date }> {
  const [sent] = await sql<{ msg_id: string }[]>`select pgmq.send(${queue}::text, ${sql.json(message)}::jsonb, ${delaySeconds}::integer) as msg_id`;
  const [row] = await sql.unsafe<{ vt: Date }[]>(`select vt from pgmq.q_${queue} where msg_id = $1`, [sent.msg_id]);
  return { msgId: sent.msg_id, visibleAt: row.vt };
}

describe("queue workers (pgmq drained by an edge function)", () => {
  it("handles a message sent with a 2 s delay no earlier than the delay, and soon after it", async () => {
    const label = randomUUID();
    const { msgId, visibleAt } = await send("fixture_jobs", { label }, 2);
    const [run] = await waitForRuns(label, (runs) => runs.length > 0, 8_000);

    expect(run).toMatchObject({ msg_id: msgId, read_ct: 1, outcome: "processed" });
    expect(run.processed_at.getTime() - run.enqueued_at.getTime()).toBeGreaterThanOrEqual(2_000);
    expect(run.processed_at.getTime()).toBeGreaterThanOrEqual(visibleAt.getTime());
    // The idle worker polls each second; the bound leaves a busy machine room while still telling a
    // prompt pickup from one that waited out the queue's 30 s visibility timeout or a cron minute.
    expect(run.processed_at.getTime() - visibleAt.getTime()).toBeLessThanOrEqual(6_000);

    // The worker records its run before it deletes the message, so the delete may follow a moment later.
    await until("the message to be deleted", async () => (await sql.unsafe(`select 1 from pgmq.q_fixture_jobs where msg_id = $1`, [msgId])).length === 0, 5_000);
  });

  it("delivers a message again after its visibility timeout when the worker crashed mid-message", async () => {
    const label = randomUUID();
    const { msgId } = await send("fixture_crashy", { label, crash_on_first_read: true });
    const runs = await waitForRuns(label, (found) => found.some((run) => run.outcome === "processed"), 12_000);

    expect(runs.map(({ read_ct, outcome }) => ({ read_ct, outcome }))).toEqual([
      { read_ct: 1, outcome: "crashed" },
      { read_ct: 2, outcome: "processed" },
    ]);
    const [crashed, processed] = runs;
    expect(crashed.msg_id).toBe(msgId);
    // Hidden for the queue's 2 s visibility timeout after the first read, then picked up promptly.
    const gap = processed.processed_at.getTime() - crashed.processed_at.getTime();
    expect(gap).toBeGreaterThanOrEqual(1_900);
    expect(gap).toBeLessThanOrEqual(5_000);

    // Handled once more, then deleted: no third delivery.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await runsOf(label)).toHaveLength(2);
    expect(await sql.unsafe(`select 1 from pgmq.q_fixture_crashy where msg_id = $1`, [msgId])).toHaveLength(0);
  });

  it("wakes a queue's worker at commit when a message is sent visible, and not when it is sent delayed", async () => {
    const heard: string[] = [];
    const subscription = await sql.listen("platform_queue_work", (queue) => heard.push(queue));
    try {
      const delayed = await send("fixture_jobs", { label: randomUUID() }, 3_600);
      await send("fixture_crashy", { label: randomUUID() });
      await until("the visible message's wake-up", async () => heard.includes("fixture_crashy"), 5_000);
      // Notifications arrive in commit order, so the delayed send's would have come first.
      expect(heard.filter((queue) => queue.startsWith("fixture_"))).toEqual(["fixture_crashy"]);
      await sql`select pgmq.delete('fixture_jobs', ${delayed.msgId}::bigint)`;
    } finally {
      await subscription.unlisten();
    }
  });

  it("keeps the worker registry away from the API roles (no schema usage, RLS on)", async () => {
    const [row] = await sql<{ rls: boolean; anon: boolean; authenticated: boolean }[]>`
      select
        has_schema_privilege('anon', 'platform', 'usage') as anon,
        has_schema_privilege('authenticated', 'platform', 'usage') as authenticated,
        (select relrowsecurity from pg_class where oid = 'platform.queue_workers'::regclass) as rls
    `;
    expect(row).toEqual({ anon: false, authenticated: false, rls: true });
  });
});
