import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const dbUrl = process.env.SUPABASE_DB_URL;
if (!dbUrl) {
  throw new Error("SUPABASE_DB_URL is not set: run the tests through `npm test`, or export it to point at a database with pgmq.");
}

const MESSAGES = 200;
const READERS = 4;

/** One connection per reader, so the readers really run side by side in separate sessions. */
function connect(): postgres.Sql {
  return postgres(dbUrl as string, { max: 1, onnotice: () => {} });
}

/**
 * Drains the queue with one reader's connection. Each read stays uncommitted for a moment, so other
 * readers meet its claimed rows still locked and must skip them rather than take them too.
 */
async function drain(sql: postgres.Sql, queue: string, claim: (tx: postgres.TransactionSql) => Promise<string[]>): Promise<string[]> {
  const received: string[] = [];
  for (;;) {
    const ids = await sql.begin(async (tx) => {
      const claimed = await claim(tx);
      await sleep(Math.floor(Math.random() * 5));
      return claimed;
    });
    if (ids.length === 0) return received;
    received.push(...ids);
  }
}

describe("pgmq under concurrent consumers", () => {
  const admin = connect();
  const readers = Array.from({ length: READERS }, connect);
  const queue = `concurrency_${randomUUID().replaceAll("-", "").slice(0, 16)}`;

  beforeAll(async () => {
    await admin`select pgmq.create(queue_name := ${queue}::text)`;
  });

  afterAll(async () => {
    await admin`select pgmq.drop_queue(queue_name := ${queue}::text)`;
    await Promise.all([admin, ...readers].map((sql) => sql.end()));
  });

  async function sendAll(): Promise<string[]> {
    const rows = await admin<{ msg_id: string }[]>`
      select msg_id::text from pgmq.send_batch(
        queue_name := ${queue}::text,
        msgs := array(select jsonb_build_object('n', n) from generate_series(1, ${MESSAGES}::integer) as n)
      ) as msg_id`;
    return rows.map((row) => row.msg_id);
  }

  function expectEachDeliveredOnce(sent: string[], perReader: string[][]): void {
    const received = perReader.flat();
    expect(new Set(received).size).toBe(received.length);
    expect([...received].sort()).toEqual([...sent].sort());
    // Every reader got work, so the readers really did overlap rather than one draining the queue.
    expect(perReader.filter((ids) => ids.length > 0).length).toBeGreaterThan(1);
  }

  it("never hands the same message to two readers of pgmq.read, and delivers every message", async () => {
    const sent = await sendAll();
    expect(sent).toHaveLength(MESSAGES);
    const perReader = await Promise.all(
      readers.map((sql) =>
        drain(sql, queue, async (tx) => {
          const rows = await tx<{ msg_id: string }[]>`
            select msg_id::text from pgmq.read(queue_name := ${queue}::text, vt := 60, qty := 5)`;
          return rows.map((row) => row.msg_id);
        }),
      ),
    );
    expectEachDeliveredOnce(sent, perReader);
  });

  it("never pops the same message twice across concurrent pgmq.pop callers", async () => {
    await admin`select pgmq.purge_queue(queue_name := ${queue}::text)`;
    const sent = await sendAll();
    const perReader = await Promise.all(
      readers.map((sql) =>
        drain(sql, queue, async (tx) => {
          const rows = await tx<{ msg_id: string }[]>`select msg_id::text from pgmq.pop(queue_name := ${queue}::text)`;
          return rows.map((row) => row.msg_id);
        }),
      ),
    );
    expectEachDeliveredOnce(sent, perReader);
  });
});
