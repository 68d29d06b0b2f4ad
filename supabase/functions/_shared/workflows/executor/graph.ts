/**
 * Compiles a validated state into the structure the executor walks: scopes (the top level and each
 * loop or parallel body) of nodes with numbered, in-scope edges, and every config value turned
 * into a resolver. Compiling once per state keeps each run to lookups and counters.
 *
 * Validation is the database's (workflows_private.state_issues): a deployment was checked in
 * deploy mode when it was deployed, and admit hands a manual run's snapshot over with its
 * deploy-mode issues (runs/run-cache.ts refuses it with them). The compiler only parses the state
 * (zod, for its defaults) and refuses what would break the structure it builds: an unknown block
 * type, a loop or parallel without settings, an edge to a missing block or across a body's border.
 * Only a state that never went through the validator (written around it, or in a test) meets them.
 */
import type { ChoiceHandles } from "../blocks/block-spec.ts";
import { BLOCK_TYPES, isBlockType, type BlockType } from "../blocks/specs.ts";
import { ValidationError, type IssueCode } from "../state/issues.ts";
import { normalizeBlockName } from "../state/names.ts";
import { ERROR_HANDLE, LOOP_START_HANDLE, PARALLEL_START_HANDLE, workflowStateSchema, type WorkflowBlock, type WorkflowState } from "../state/state-schema.ts";
import { describeBlock, type BlockIdentity } from "../core/errors.ts";
import { compileValue, type CompiledValue } from "../core/resolver.ts";

/**
 * When an edge is followed, given its source's outcome: on success, on error, or when a choosing
 * block (Condition, Router) put `id` in its output's `field`.
 */
export type EdgeRule = { on: "success" } | { on: "error" } | { on: "choice"; field: string; id: string };

/** An edge inside one scope; `target` is the target's index in that scope. */
export interface CompiledEdge {
  target: number;
  rule: EdgeRule;
}

/** A loop's or parallel's body and how its settings resolve. */
export interface CompiledSubflow {
  kind: "loop" | "parallel";
  /** `for` / `forEach` for loops, `count` / `collection` for parallels. */
  mode: "for" | "forEach" | "count" | "collection";
  body: CompiledScope;
  plan: ScopePlan;
}

/** One block, ready to run. */
export interface CompiledNode {
  id: string;
  block: WorkflowBlock;
  type: BlockType;
  identity: BlockIdentity;
  /** The container whose body holds this block, or null at the top level. */
  scopeId: string | null;
  index: number;
  outgoing: CompiledEdge[];
  hasErrorEdge: boolean;
  /** No successor in its scope: its output can be the scope's final output. */
  isSink: boolean;
  /** The config (for containers: their loop/parallel settings) as a resolver. */
  config: CompiledValue;
  /** Blocks each outgoing handle leads to (for Condition/Router `selectedPath`). */
  targets: Map<string, BlockIdentity[]>;
  /** How the block chooses a path (Condition, Router), or null. */
  choice: ChoiceHandles | null;
  subflow: CompiledSubflow | null;
}

/** The top level or one body. */
export interface CompiledScope {
  id: string | null;
  nodes: CompiledNode[];
}

/**
 * Which nodes of a scope take part when it starts from `entries`: nodes unreachable from them are
 * skipped up front and their edges are not counted, so nothing waits on a block that cannot run.
 */
export interface ScopePlan {
  entries: number[];
  reachable: Uint8Array;
  /** Per node, the number of incoming edges from reachable nodes. */
  incoming: Int32Array;
}

/** A compiled workflow. */
export interface CompiledWorkflow {
  state: WorkflowState;
  nodes: Map<string, CompiledNode>;
  /** Blocks by normalised name. */
  byName: Map<string, CompiledNode>;
  apiTrigger: CompiledNode | null;
  root: CompiledScope;
  /** Plans of the top level per trigger block, computed on first use. */
  rootPlans: Map<string, ScopePlan>;
}

function ruleOf(handle: string | null | undefined, type: BlockType): EdgeRule {
  if (handle === ERROR_HANDLE) return { on: "error" };
  const choice = BLOCK_TYPES[type].choice;
  if (handle && choice && handle.startsWith(choice.prefix)) return { on: "choice", field: choice.outputField, id: handle.slice(choice.prefix.length) };
  return { on: "success" };
}

/** The scope plan for `entries`: what is reachable and how many live inputs each node waits for. */
export function planScope(scope: CompiledScope, entries: number[]): ScopePlan {
  const reachable = new Uint8Array(scope.nodes.length);
  const queue = [...entries];
  for (const entry of entries) reachable[entry] = 1;
  while (queue.length > 0) {
    for (const edge of scope.nodes[queue.pop() as number].outgoing) {
      if (reachable[edge.target] === 0) {
        reachable[edge.target] = 1;
        queue.push(edge.target);
      }
    }
  }
  const incoming = new Int32Array(scope.nodes.length);
  scope.nodes.forEach((node, index) => {
    if (reachable[index] === 1) for (const edge of node.outgoing) incoming[edge.target]++;
  });
  return { entries, reachable, incoming };
}

function codePathsOf(type: BlockType): ReadonlySet<string> {
  if (type === "loop" || type === "parallel") return new Set();
  return new Set(BLOCK_TYPES[type].codePaths ?? []);
}

/** The compiler's refusal of a state it cannot build (see the module comment), as a run's answer lists issues. */
function unrunnable(code: IssueCode, field: string, message: string): ValidationError {
  return new ValidationError([{ code, field, message }]);
}

/** The state with zod's defaults applied, or a ValidationError naming each field that breaks its shape. */
function parseState(input: unknown): WorkflowState {
  const parsed = workflowStateSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ValidationError(parsed.error.issues.map((issue) => {
    const field = issue.path.map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${String(segment)}`)).join("").replace(/^\./, "") || "state";
    return { code: "invalid_shape", field, message: `Workflow state: ${field}: ${issue.message}` };
  }));
}

/**
 * Parses and compiles a state the database validated. Throws a ValidationError when its shape or
 * structure is one the compiler cannot build (see the module comment).
 */
export function compileWorkflow(input: unknown): CompiledWorkflow {
  const state = parseState(input);
  const parentOf = new Map<string, string>();
  for (const [id, loop] of Object.entries(state.loops)) for (const node of loop.nodes) parentOf.set(node, id);
  for (const [id, parallel] of Object.entries(state.parallels)) for (const node of parallel.nodes) parentOf.set(node, id);

  const scopes = new Map<string | null, CompiledScope>([[null, { id: null, nodes: [] }]]);
  const nodes = new Map<string, CompiledNode>();
  const byName = new Map<string, CompiledNode>();
  for (const block of Object.values(state.blocks)) {
    const scopeId = parentOf.get(block.id) ?? null;
    let scope = scopes.get(scopeId);
    if (!scope) {
      scope = { id: scopeId, nodes: [] };
      scopes.set(scopeId, scope);
    }
    if (!isBlockType(block.type)) throw unrunnable("unknown_block_type", `blocks.${block.id}.type`, `${describeBlock(block)}: "${block.type}" is not a block type`);
    const type = block.type;
    const settings = type === "loop" ? state.loops[block.id] : type === "parallel" ? state.parallels[block.id] : null;
    if (settings === undefined) throw unrunnable("missing_subflow", `${type === "loop" ? "loops" : "parallels"}.${block.id}`, `${describeBlock(block)}: it has no settings`);
    const node: CompiledNode = {
      id: block.id,
      block,
      type,
      identity: { id: block.id, name: block.name, type: block.type },
      scopeId,
      index: scope.nodes.length,
      outgoing: [],
      hasErrorEdge: false,
      isSink: true,
      config: compileValue(settings ? Object.fromEntries(Object.entries(settings).filter(([key]) => key !== "nodes")) : block.config, codePathsOf(type)),
      targets: new Map(),
      choice: BLOCK_TYPES[type].choice ?? null,
      subflow: null,
    };
    scope.nodes.push(node);
    nodes.set(block.id, node);
    byName.set(normalizeBlockName(block.name), node);
  }

  const startEdges = new Map<string, number[]>();
  state.edges.forEach((edge, index) => {
    const source = nodes.get(edge.source);
    const target = nodes.get(edge.target);
    if (!source || !target) {
      const [end, id] = source ? ["target", edge.target] : ["source", edge.source];
      throw unrunnable("dangling_edge", `edges[${index}].${end}`, `Edge "${edge.id}": ${end} "${id}" is not a block`);
    }
    const handle = edge.sourceHandle ?? "";
    const isStart = handle === LOOP_START_HANDLE || handle === PARALLEL_START_HANDLE;
    // Edges number their targets within one scope; a start edge leads from a container into its body.
    if ((isStart ? source.id : source.scopeId) !== target.scopeId) {
      throw unrunnable("cross_scope_edge", `edges[${index}].target`, `Edge "${edge.id}": "${source.block.name}" and "${target.block.name}" are not in the same scope`);
    }
    if (isStart) {
      startEdges.set(source.id, [...(startEdges.get(source.id) ?? []), target.index]);
      return;
    }
    const rule = ruleOf(edge.sourceHandle, source.type);
    source.outgoing.push({ target: target.index, rule });
    source.isSink = false;
    if (rule.on === "error") source.hasErrorEdge = true;
    source.targets.set(handle, [...(source.targets.get(handle) ?? []), target.identity]);
  });

  for (const node of nodes.values()) {
    if (node.type !== "loop" && node.type !== "parallel") continue;
    const body = scopes.get(node.id) ?? { id: node.id, nodes: [] };
    const mode = node.type === "loop" ? state.loops[node.id].loopType : state.parallels[node.id].parallelType;
    node.subflow = { kind: node.type, mode, body, plan: planScope(body, startEdges.get(node.id) ?? []) };
  }

  const apiTrigger = [...nodes.values()].find((node) => node.type === "api_trigger") ?? null;
  const root = scopes.get(null) as CompiledScope;
  return { state, nodes, byName, apiTrigger, root, rootPlans: new Map() };
}

/** The top-level plan when a run starts from `trigger`. */
export function rootPlan(workflow: CompiledWorkflow, trigger: CompiledNode): ScopePlan {
  let plan = workflow.rootPlans.get(trigger.id);
  if (!plan) {
    plan = planScope(workflow.root, [trigger.index]);
    workflow.rootPlans.set(trigger.id, plan);
  }
  return plan;
}

/** True for block types in the `trigger` category. */
export function isTrigger(node: CompiledNode): boolean {
  return BLOCK_TYPES[node.type].category === "trigger";
}
