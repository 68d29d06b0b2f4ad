/**
 * For the durable-run tests: a local HTTP server that counts requests by path, so an API block's
 * side effect can be counted for real (how many times did block `s3` call out?), and the SQL reads
 * those tests make of a run's parking and history.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type postgres from "postgres";

/** A running counter server: `hits` by path (`/hit/s1` → "s1"), and its base URL. */
export interface CounterServer {
  url: string;
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** Answers `GET /hit/<name>` with `{name, count}`, counting each name's requests. */
export async function startCounterServer(): Promise<CounterServer> {
  const hits = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const name = (request.url ?? "").replace(/^\/hit\//, "");
    const count = (hits.get(name) ?? 0) + 1;
    hits.set(name, count);
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name, count }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A run's status, attempt and parking, and how many checkpoints it has. */
export async function runState(sql: postgres.Sql, executionId: string): Promise<{ status: string; attempt: number; parkedUntil: Date | null; leaseExpiresAt: Date | null; checkpoints: string[] }> {
  const [row] = await sql<{ status: string; attempt: number; parked_until: Date | null; lease_expires_at: Date | null; checkpoints: string[] | null }[]>`
    select e.status::text, e.attempt, e.parked_until, e.lease_expires_at,
      (select array_agg(c.key order by c.seq) from workflows_private.run_checkpoints c where c.execution_id = e.id and c.kind = 'completed') as checkpoints
    from public.workflow_executions e where e.id = ${executionId}`;
  return { status: row.status, attempt: row.attempt, parkedUntil: row.parked_until, leaseExpiresAt: row.lease_expires_at, checkpoints: row.checkpoints ?? [] };
}
