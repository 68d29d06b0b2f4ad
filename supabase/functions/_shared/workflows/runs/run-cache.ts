/**
 * What a function instance keeps between runs, so a steady stream of runs sends and parses no
 * workflow state and decrypts no environment after the first (docs/workflow-runs.md, "Admitted,
 * sync"): compiled deployments by id (immutable, so kept for ever, within a bound), a manual run's
 * compiled snapshot by id (content-addressed, equally immutable), each workspace's decrypted
 * environment with its version, and per workflow the workspace and last deployment seen, which is
 * what admit is told the instance holds.
 */
import { compileWorkflow } from "../executor/execute.ts";
import type { CompiledWorkflow } from "../executor/graph.ts";
import { ValidationError } from "../state/issues.ts";
import type { RunPayload } from "./lifecycle-answers.ts";

/** Most entries per map; the oldest go first. Each is a few kilobytes of compiled state. */
const MAX_ENTRIES = 500;

/** A Map that forgets its oldest entry past MAX_ENTRIES. */
class BoundedMap<K, V> extends Map<K, V> {
  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= MAX_ENTRIES) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}

/** A workspace's environment at a version. */
export interface CachedEnvironment {
  version: number;
  variables: Record<string, string>;
}

/** A compiled state, or why it cannot run (kept so a refused draft is not looked at twice). */
export type CompiledEntry = { ok: true; compiled: CompiledWorkflow } | { ok: false; error: unknown };

/** A state compiled, or the graph compiler's refusal of it. */
function compiledEntry(state: unknown): CompiledEntry {
  try {
    return { ok: true, compiled: compileWorkflow(state) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The instance's cache (see the module comment). */
export class RunCache {
  private readonly compiled = new BoundedMap<string, CompiledEntry>();
  private readonly environments = new BoundedMap<string, CachedEnvironment>();
  private readonly workflows = new BoundedMap<string, { workspaceId: string; deploymentId: string | null }>();

  /** What to tell admit about `workflowId`: the deployment whose state we hold, the environment version. */
  admitHints(workflowId: string): { p_cached_deployment_ids?: string[]; p_environment_version?: number; workspaceId?: string } {
    const known = this.workflows.get(workflowId);
    if (!known) return {};
    const hints: { p_cached_deployment_ids?: string[]; p_environment_version?: number; workspaceId?: string } = { workspaceId: known.workspaceId };
    if (known.deploymentId && this.compiled.has(known.deploymentId)) hints.p_cached_deployment_ids = [known.deploymentId];
    const environment = this.environments.get(known.workspaceId);
    if (environment) hints.p_environment_version = environment.version;
    return hints;
  }

  /** What to tell claim: every deployment held, and the environment version per workspace. */
  claimHints(): { p_cached_deployment_ids: string[]; p_environment_versions: Record<string, number> } {
    return {
      p_cached_deployment_ids: [...this.compiled.keys()],
      p_environment_versions: Object.fromEntries([...this.environments].map(([workspaceId, environment]) => [workspaceId, environment.version])),
    };
  }

  /**
   * The compiled workflow a payload runs: its deployment's (or snapshot's) state compiled once.
   * Throws a ValidationError for a snapshot the database found issues in (a draft with no enabled
   * trigger, say: admit checks it in deploy mode) or a state the graph compiler refuses, and an
   * Error when the payload left the state out for a deployment this instance does not hold (it was
   * told it did: only after the entry was evicted, which MAX_ENTRIES makes rare).
   */
  compiledFor(payload: RunPayload): CompiledWorkflow {
    const source = payload.deployment ?? payload.snapshot;
    if (!source) throw new Error(`run ${payload.executionId} has neither a deployment nor a snapshot`);
    let entry = this.compiled.get(source.id);
    if (!entry) {
      if (source.state === undefined) throw new Error(`the state of ${source.id} was left out but is not cached`);
      const issues = payload.snapshot?.issues ?? [];
      entry = issues.length > 0 ? { ok: false, error: new ValidationError(issues) } : compiledEntry(source.state);
      this.compiled.set(source.id, entry);
    }
    this.workflows.set(payload.workflow.id, { workspaceId: payload.workflow.workspaceId, deploymentId: payload.deployment?.id ?? this.workflows.get(payload.workflow.id)?.deploymentId ?? null });
    if (!entry.ok) throw entry.error;
    return entry.compiled;
  }

  /**
   * The environment a payload runs with: its variables when admit sent them (cached under their
   * version), else the cached ones, which admit left out because the version matched. Null when
   * neither is there (the caller assumed another workspace), so the caller reads them itself.
   */
  environmentFor(payload: RunPayload, assumedWorkspaceId: string | undefined): Record<string, string> | null {
    const { workspaceId } = payload.workflow;
    const { version, variables } = payload.environment;
    if (variables) {
      this.environments.set(workspaceId, { version, variables });
      return variables;
    }
    const cached = this.environments.get(workspaceId);
    // Versions count per workspace: a match is only meaningful for the workspace it was sent for.
    if (!cached || cached.version !== version || (assumedWorkspaceId !== undefined && assumedWorkspaceId !== workspaceId)) return null;
    return cached.variables;
  }

  /** Keeps environment variables read directly (the fallback of environmentFor). */
  rememberEnvironment(workspaceId: string, version: number, variables: Record<string, string>): void {
    this.environments.set(workspaceId, { version, variables });
  }
}

/** The function instance's cache. */
export const runCache = new RunCache();
