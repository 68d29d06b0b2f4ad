/**
 * Deleting a workspace (issue 29, finding 6): the owner's DELETE through the data API removes
 * everything the workspace owns in one transaction — environment variables included — and queues
 * a sweep that removes its run files from the `workflow-files` bucket through the Storage API, so
 * their bytes leave the disk too. Another workspace's files stay.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { serviceClient } from "../helpers/clients.ts";
import { until } from "../helpers/until.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, openDatabase, recordRuns } from "./logs-helpers.ts";

const storageDir = loadConfig("test").storageDir;

describe("deleting a workspace", () => {
  let sql: Sql;
  let doomed: TestWorkspace;
  let kept: TestWorkspace;
  let workflowId: string;
  let doomedPaths: string[];
  let keptPath: string;
  /** Object name → on-disk version, read before anything is deleted. */
  let stored: Map<string, string>;

  /** The on-disk version of each stored object, by name (the local Storage keeps bytes under objects/<version>). */
  async function versions(names: string[]): Promise<Map<string, string>> {
    const rows = await sql<{ name: string; version: string }[]>`
      select name, version from storage.objects where bucket_id = 'workflow-files' and name = any(${names})`;
    return new Map(rows.map((row) => [row.name, row.version]));
  }

  async function upload(path: string): Promise<void> {
    const stored = await serviceClient().storage.from("workflow-files").upload(path, `bytes of ${path}`, { contentType: "text/plain" });
    expect(stored.error).toBeNull();
  }

  beforeAll(async () => {
    sql = openDatabase();
    [doomed, kept] = await Promise.all([createWorkspace("Doomed"), createWorkspace("Kept")]);
    const admin = doomed.members.admin.client;
    const variable = await admin.rpc("set_environment_variable", { p_workspace_id: doomed.id, p_name: "TOKEN", p_value: "s3cret" });
    expect(variable.error).toBeNull();
    const key = await admin.rpc("create_api_key", { p_name: "CI", p_workspace_id: doomed.id });
    expect(key.error).toBeNull();
    workflowId = await deployedWorkflow(doomed, "Hooked");
    await recordRuns(sql, [{ workflowId, trigger: "webhook" }]);
    // A run's files live under <workspace>/<workflow>/<execution>/.
    const execution = randomUUID();
    doomedPaths = Array.from({ length: 3 }, (_, index) => `${doomed.id}/${workflowId}/${execution}/${index}-report.txt`);
    keptPath = `${kept.id}/${randomUUID()}/${randomUUID()}/invoice.txt`;
    await Promise.all([...doomedPaths, keptPath].map(upload));
    stored = await versions([...doomedPaths, keptPath]);
    expect(stored.size).toBe(doomedPaths.length + 1);
  });

  afterAll(async () => {
    await sql.end();
  });

  it("refuses an admin (only owners delete) and leaves everything in place", async () => {
    const { data, error } = await doomed.members.admin.client.from("workspaces").delete().eq("id", doomed.id).select("id");
    expect(error).toBeNull();
    expect(data).toEqual([]);
    expect((await versions(doomedPaths)).size).toBe(doomedPaths.length);
  });

  it("lets the owner delete a workspace with environment variables, keys, deployments and runs, all gone with it", async () => {
    const { data, error } = await doomed.owner.client.from("workspaces").delete().eq("id", doomed.id).select("id");
    expect(error).toBeNull();
    expect(data).toEqual([{ id: doomed.id }]);
    const [left] = await sql<{ workflows: number; variables: number; keys: number; runs: number; versions: number }[]>`
      select
        (select count(*)::int from public.workflows where workspace_id = ${doomed.id}) as workflows,
        (select count(*)::int from public.environment_variables where workspace_id = ${doomed.id}) as variables,
        (select count(*)::int from public.api_keys where workspace_id = ${doomed.id}) as keys,
        (select count(*)::int from public.workflow_executions where workspace_id = ${doomed.id}) as runs,
        (select count(*)::int from workflows_private.environment_versions where workspace_id = ${doomed.id}) as versions`;
    expect(left).toEqual({ workflows: 0, variables: 0, keys: 0, runs: 0, versions: 0 });
  });

  it("sweeps the deleted workspace's files out of the bucket and off the disk, and leaves other workspaces' files", async () => {
    await until("the sweep removed the deleted workspace's files", async () => (await versions(doomedPaths)).size === 0, 30_000, 200);
    for (const path of doomedPaths) expect(existsSync(join(storageDir, "objects", stored.get(path)!))).toBe(false);
    const gone = await serviceClient().storage.from("workflow-files").download(doomedPaths[0]);
    expect(gone.error).toMatchObject({ statusCode: "404" });
    const still = await serviceClient().storage.from("workflow-files").download(keptPath);
    expect(still.error).toBeNull();
    expect(await still.data!.text()).toBe(`bytes of ${keptPath}`);
    expect(existsSync(join(storageDir, "objects", stored.get(keptPath)!))).toBe(true);
  }, 45_000);
});
