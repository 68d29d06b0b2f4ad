import { describe, expect, it } from "vitest";
import type { ExecuteOptions } from "../engine/execute.ts";
import { WorkflowBuilder } from "../state/state-builder.ts";
import { runDraft } from "./manual-run.ts";
import type { DraftAccess, WorkflowStore } from "./workflow-store.ts";

const state = new WorkflowBuilder()
  .block("api", "api_trigger", { inputFormat: [{ name: "who", type: "string", value: "editor" }] }, { name: "API" })
  .block("greet", "function", { code: "return 'hi ' + <api.who> + {{SUFFIX}};" }, { name: "Greet" })
  .chain("api", "greet")
  .build();

function store(draft: Partial<DraftAccess> | null = {}): WorkflowStore & { environments: string[] } {
  const environments: string[] = [];
  return {
    environments,
    loadDraft: (_authorization, workflowId) => Promise.resolve(draft && { workflowId, workspaceId: "ws1", name: "W", state, role: "editor", ...draft }),
    loadEnvironment: (workspaceId) => {
      environments.push(workspaceId);
      return Promise.resolve({ SUFFIX: "!" });
    },
  };
}

const request = { authorization: "Bearer t", workflowId: "w1" };

describe("admitting and running a manual run", () => {
  it("runs the draft with the workspace's environment, as a manual run", async () => {
    const fake = store();
    const result = await runDraft({ ...request, input: { who: "ana" } }, fake);
    expect(result).toMatchObject({ success: true, output: { result: "hi ana!" }, metadata: { trigger: "manual" } });
    expect(fake.environments).toEqual(["ws1"]);
  });

  it("passes the trigger, the time limit and the signal to the engine", async () => {
    const seen: ExecuteOptions[] = [];
    const signal = new AbortController().signal;
    await runDraft({ ...request, triggerBlockId: "api", timeoutMs: 500, signal }, store(), (options) => {
      seen.push(options);
      return Promise.reject(new Error("not run"));
    }).catch(() => undefined);
    expect(seen[0]).toMatchObject({ trigger: { kind: "manual", blockId: "api" }, timeoutMs: 500, signal, env: { SUFFIX: "!" } });
  });

  it("refuses workflows the caller cannot see, and callers below editor, before reading the environment", async () => {
    await expect(runDraft(request, store(null))).rejects.toMatchObject({ code: "NOT_FOUND" });
    const viewer = store({ role: "viewer" });
    await expect(runDraft(request, viewer)).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(viewer.environments).toEqual([]);
  });
});
