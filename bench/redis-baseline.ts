/**
 * The Redis baseline for a leaderboard position: starts Debian's `redis-server` on a free loopback
 * port with no persistence, loads a board as one sorted set, answers ZREVRANK over one kept-alive
 * connection (as the SQL figure is measured over one Postgres connection) and stops the server. `prepareMachine("bench")` installs the package.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { until } from "../test/helpers/until.ts";
import { ascending, percentile } from "./bench-support.ts";

/** One member of a board: its score orders it, highest first. */
export interface BoardEntry {
  member: string;
  score: number;
}

/** Latency percentiles in milliseconds. */
export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
}

/** A free TCP port on 127.0.0.1 (the kernel's pick, released at once). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (address && typeof address === "object" ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** A running redis-server of the bench's own, with a client connected to it. */
export class RedisBaseline {
  private constructor(private readonly server: ChildProcess, private readonly directory: string, readonly client: Redis) {}

  /** Starts `redis-server` (no RDB snapshots, no AOF, loopback only) and waits until it answers. */
  static async start(): Promise<RedisBaseline> {
    const port = await freePort();
    const directory = mkdtempSync(join(tmpdir(), "orbita-redis-"));
    const server = spawn("redis-server", ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", directory], {
      stdio: "ignore",
    });
    const client = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // Refused connections while the server starts are expected; failures reach the callers through the commands' promises.
    client.on("error", () => {});
    await until("redis-server to answer PING", async () => {
      if (server.exitCode !== null) throw new Error(`redis-server exited with ${server.exitCode} (is the redis-server package installed?)`);
      try {
        if (client.status !== "ready") await client.connect();
        return (await client.ping()) === "PONG";
      } catch {
        client.disconnect();
        return false;
      }
    }, 15_000);
    return new RedisBaseline(server, directory, client);
  }

  /** Loads `entries` into the sorted set `key`, pipelined in chunks of 10,000. */
  async load(key: string, entries: AsyncIterable<BoardEntry[]>): Promise<number> {
    let loaded = 0;
    for await (const chunk of entries) {
      for (let i = 0; i < chunk.length; i += 10_000) {
        const args: (string | number)[] = [];
        for (const entry of chunk.slice(i, i + 10_000)) args.push(entry.score, entry.member);
        if (args.length > 0) await this.client.zadd(key, ...args);
      }
      loaded += chunk.length;
    }
    return loaded;
  }

  /** ZREVRANK of `member` (0 for the leader); fails if it is not on the board. */
  async rank(key: string, member: string): Promise<number> {
    const rank = await this.client.zrevrank(key, member);
    if (rank === null) throw new Error(`${member} is not on the Redis board ${key}`);
    return rank;
  }

  /** Closes the client, stops the server it started and removes its directory. */
  async stop(): Promise<void> {
    this.client.disconnect();
    if (this.server.exitCode === null) {
      const exited = new Promise((resolve) => this.server.once("exit", resolve));
      this.server.kill("SIGTERM");
      await exited;
    }
    rmSync(this.directory, { recursive: true, force: true });
  }
}

/** p50, p95 and p99 of latency samples in milliseconds. */
export function percentilesOf(samples: readonly number[]): Percentiles {
  const sorted = ascending(samples);
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), p99: percentile(sorted, 0.99) };
}
