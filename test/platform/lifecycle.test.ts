import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig, PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { ownStackSlot } from "../helpers/own-stack.ts";
import { pushMigrations } from "../../platform/postgres/migrations.ts";
import { installPackages } from "../../platform/commands/setup.ts";
import { clusterRunning, destroyCluster, startCluster, stopCluster } from "../../platform/postgres/cluster.ts";

// A cluster of its own (test/helpers/own-stack.ts), so nothing it does can disturb a running stack.
const config = loadConfig("test", ownStackSlot("lifecycle"));

describe("local Postgres lifecycle", () => {
  afterAll(() => destroyCluster(config));

  it("creates and bootstraps a cluster, and starting it again is harmless", async () => {
    destroyCluster(config);
    expect(await startCluster(config)).toEqual({ created: true });
    expect(await startCluster(config)).toEqual({ created: false });
    expect(clusterRunning(config)).toBe(true);
  });

  it("recovers from a stale pid file left by a crash", async () => {
    stopCluster(config);
    writeFileSync(join(config.pgDataDir, "postmaster.pid"), "999999\n");
    await startCluster(config);
    expect(clusterRunning(config)).toBe(true);
  });

  it("stops with one clear line when its port is taken, starting nothing", async () => {
    stopCluster(config);
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(config.ports.db, "127.0.0.1", resolve));
    try {
      await expect(startCluster(config)).rejects.toThrow(`Port ${config.ports.db} (Postgres) is already in use by another program.`);
      expect(clusterRunning(config)).toBe(false);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it("rolls back a failing migration, names it, and keeps the ones before it", async () => {
    await startCluster(config);
    const workdir = mkdtempSync(join(tmpdir(), "orbita-migrations-"));
    mkdirSync(join(workdir, "supabase", "migrations"), { recursive: true });
    copyFileSync(join(PROJECT_ROOT, "supabase", "config.toml"), join(workdir, "supabase", "config.toml"));
    writeFileSync(join(workdir, "supabase", "seed.sql"), "");
    writeFileSync(join(workdir, "supabase", "migrations", "20200101000000_good.sql"), "create table public.kept (id int);");
    writeFileSync(join(workdir, "supabase", "migrations", "20200101000001_bad.sql"), "create table public.half_done (id int);\nselect 1/0;");

    expect(() => pushMigrations(config, workdir)).toThrow(/migration 20200101000001_bad\.sql failed: ERROR: division by zero/);

    const sql = postgres(config.dbUrl, { max: 1 });
    try {
      const [state] = await sql`select to_regclass('public.kept') is not null as kept, to_regclass('public.half_done') is not null as half_done,
        array(select version from supabase_migrations.schema_migrations order by version) as versions`;
      expect(state).toEqual({ kept: true, half_done: false, versions: ["20200101000000"] });
    } finally {
      await sql.end();
    }
  });

  it("stops with one clear line when a Debian package cannot be installed", () => {
    expect(() => installPackages(["orbita-no-such-package"])).toThrow(/^Could not install Debian packages orbita-no-such-package: .*Unable to locate package orbita-no-such-package/);
  }, 120_000);
});
