/**
 * Validation of a workflow state, on save, on deploy and before every run. It reports every issue
 * it finds, each naming the block (or edge) and the field, rather than stopping at the first.
 *
 * The database runs the same rules in SQL (migration `..._workflows-validation.sql`) so a draft
 * saved straight through the data API is checked too; both report the same issue codes and fields
 * for the same state (test/workflows/validation-parity.test.ts holds them together). What a block
 * type adds (its config schema, its cross-field rules, its handles) is data from the catalogue that
 * both validators read, so only the structural rules below exist in both languages.
 */
import type { z } from "zod";
import { asRecord } from "../core/values.ts";
import { BLOCK_TYPES, isBlockType, type BlockType } from "../blocks/specs.ts";
import { configRuleProblems } from "./config-rules.ts";
import { describeBlock } from "../core/errors.ts";
import { ValidationError, type IssueCode, type ValidationIssue } from "./issues.ts";
import { NORMALIZED_NAME_PATTERN, normalizeBlockName, RESERVED_NAMES } from "./names.ts";
import { stateCapIssues } from "./state-caps.ts";
import { collectTokens, getPath, type Token } from "../core/references.ts";
import { ERROR_HANDLE, LOOP_START_HANDLE, PARALLEL_START_HANDLE, workflowStateSchema, type WorkflowBlock, type WorkflowState } from "./state-schema.ts";

/** `save` accepts work in progress; `deploy` (and every run) also needs a trigger. */
export type ValidationMode = "save" | "deploy";

/** The outcome: the parsed state (defaults applied) or the issues. */
export type ValidationResult = { ok: true; state: WorkflowState } | { ok: false; issues: ValidationIssue[] };

/** Properties an enclosing loop or parallel offers to `<loop.x>` / `<loopName.x>` inside its body. */
export const ITERATION_FIELDS: ReadonlySet<string> = new Set(["index", "item", "items"]);

function formatZodPath(path: readonly PropertyKey[]): string {
  return path.map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${String(segment)}`)).join("");
}

function valueAt(root: unknown, path: readonly PropertyKey[]): { present: boolean } {
  const lookup = getPath(root, path.map((segment) => (typeof segment === "number" ? segment : String(segment))));
  return { present: lookup.found && lookup.value !== undefined };
}

function joinField(base: string, path: readonly PropertyKey[]): string {
  const joined = `${base}${formatZodPath(path)}`;
  return joined.startsWith(".") ? joined.slice(1) : joined || "state";
}

function sizeDetail(origin: string, bound: "at least" | "at most", limit: number | bigint, inclusive: boolean): string {
  if (origin === "number") return inclusive ? `must be ${bound} ${limit}` : `must be ${bound === "at least" ? "greater" : "less"} than ${limit}`;
  const unit = origin === "string" ? "characters" : "items";
  return `must have ${bound} ${limit} ${unit}`;
}

/** Turns zod issues into sentences naming the owner (`describe`) and the field. */
function zodIssues(error: z.ZodError, data: unknown, base: string, code: IssueCode, describe: string, extra: Partial<ValidationIssue>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const field = joinField(base, [...issue.path, key]);
        issues.push({ ...extra, code, field, message: `${describe}: ${field} is not a known field` });
      }
      continue;
    }
    const field = joinField(base, issue.path);
    let detail: string;
    if (issue.code === "invalid_type" && !valueAt(data, issue.path).present) detail = "is required";
    else if (issue.code === "invalid_type") detail = `must be a${/^[aeiou]/.test(issue.expected) ? "n" : ""} ${issue.expected}`;
    else if (issue.code === "invalid_value") detail = `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
    else if (issue.code === "invalid_union") detail = "has the wrong type or is out of range";
    else if (issue.code === "too_small") detail = sizeDetail(issue.origin, "at least", issue.minimum, issue.inclusive ?? true);
    else if (issue.code === "too_big") detail = sizeDetail(issue.origin, "at most", issue.maximum, issue.inclusive ?? true);
    else if (issue.code === "invalid_format") detail = `does not have the expected format${"pattern" in issue && issue.pattern ? ` (${String(issue.pattern)})` : ""}`;
    else detail = issue.message;
    issues.push({ ...extra, code, field, message: `${describe}: ${field} ${detail}` });
  }
  return issues;
}

interface Analysis {
  state: WorkflowState;
  issues: ValidationIssue[];
  /** Direct container (loop or parallel block id) of each block in a body. */
  parentOf: Map<string, string>;
  /** Blocks by normalised name (first holder wins when names clash). */
  byName: Map<string, WorkflowBlock>;
  /** Keys of blocks whose type or config is wrong: their edges are not checked further. */
  invalid: Set<string>;
}

function issueFor(block: WorkflowBlock, code: IssueCode, field: string, message: string): ValidationIssue {
  return { code, blockId: block.id, blockName: block.name, field, message: `${describeBlock(block)}: ${message}` };
}

/** Ids in a fixed order (UTF-16 code units, which matches SQL's `collate "C"` for these ids). */
function sortedIds(record: Record<string, unknown>): string[] {
  return Object.keys(record).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function checkBlocks(analysis: Analysis): void {
  const { state, issues, byName } = analysis;
  // Sorted, so "the first block with a name" is the same for every reader of the JSON.
  for (const key of sortedIds(state.blocks)) {
    const block = state.blocks[key];
    const base = `blocks.${key}`;
    if (block.id !== key) issues.push(issueFor(block, "block_id_mismatch", `${base}.id`, `its id "${block.id}" differs from its key "${key}"`));
    const normalized = normalizeBlockName(block.name);
    if (!NORMALIZED_NAME_PATTERN.test(normalized)) {
      issues.push(issueFor(block, "invalid_block_name", `${base}.name`, `the name may contain only letters, digits, spaces, "_" and "-", so it can be referenced as <${normalized || "name"}.field>`));
    } else if (RESERVED_NAMES.has(normalized)) {
      issues.push(issueFor(block, "reserved_block_name", `${base}.name`, `"${normalized}" is reserved for <${normalized}.…> references`));
    } else if (byName.has(normalized)) {
      const other = byName.get(normalized) as WorkflowBlock;
      issues.push(issueFor(block, "duplicate_block_name", `${base}.name`, `the name is the same as block "${other.name}" once normalised ("${normalized}")`));
    } else {
      byName.set(normalized, block);
    }
    if (!isBlockType(block.type)) {
      issues.push(issueFor(block, "unknown_block_type", `${base}.type`, `"${block.type}" is not a block type (known: ${Object.keys(BLOCK_TYPES).join(", ")})`));
      analysis.invalid.add(key);
      continue;
    }
    const parsed = BLOCK_TYPES[block.type].configSchema.safeParse(block.config);
    if (!parsed.success) {
      analysis.invalid.add(key);
      issues.push(...zodIssues(parsed.error, block.config, `${base}.config`, "invalid_config", describeBlock(block), { blockId: block.id, blockName: block.name }));
    } else {
      checkBlockConfig(block, block.type, issues);
    }
  }
}

interface NamedEntry {
  name: string;
}

/** Rules across fields of one config (declared by its block type as data; see config-rules.ts). */
function checkBlockConfig(block: WorkflowBlock, type: BlockType, issues: ValidationIssue[]): void {
  const rules = BLOCK_TYPES[type].rules;
  if (rules.length === 0) return;
  for (const problem of configRuleProblems(rules, block.config, `blocks.${block.id}.config`)) issues.push(issueFor(block, "invalid_block_config", problem.field, problem.message));
}

type SubflowKind = "loop" | "parallel";

/** Loops and parallels together, ordered by id so both validators claim members in the same order. */
function subflowEntries(state: WorkflowState): [SubflowKind, string, { nodes: string[] }][] {
  const entries: [SubflowKind, string, { nodes: string[] }][] = [
    ...Object.entries(state.loops).map(([id, loop]) => ["loop", id, loop] as [SubflowKind, string, { nodes: string[] }]),
    ...Object.entries(state.parallels).map(([id, parallel]) => ["parallel", id, parallel] as [SubflowKind, string, { nodes: string[] }]),
  ];
  return entries.sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[0] < b[0] ? -1 : 1));
}

/** Pairs containers with their settings and records each body member's container; false when bodies nest in a circle. */
function checkSubflows(analysis: Analysis): boolean {
  const { state, issues, parentOf } = analysis;
  const containerField = (kind: SubflowKind) => (kind === "loop" ? "loops" : "parallels");
  for (const block of Object.values(state.blocks)) {
    if (block.type === "loop" && !Object.hasOwn(state.loops, block.id)) issues.push(issueFor(block, "missing_subflow", `loops.${block.id}`, `a loop block needs its settings in loops.${block.id}`));
    if (block.type === "parallel" && !Object.hasOwn(state.parallels, block.id)) issues.push(issueFor(block, "missing_subflow", `parallels.${block.id}`, `a parallel block needs its settings in parallels.${block.id}`));
  }
  for (const [kind, id, settings] of subflowEntries(state)) {
    const container = state.blocks[id];
    const field = `${containerField(kind)}.${id}`;
    if (!container || container.type !== kind) {
      issues.push({ code: "missing_subflow", field, message: `${field} belongs to no ${kind} block with id "${id}"` });
      continue;
    }
    settings.nodes.forEach((nodeId, index) => {
      const node = state.blocks[nodeId];
      const nodeField = `${field}.nodes[${index}]`;
      if (!node || nodeId === id) {
        issues.push(issueFor(container, "subflow_member", nodeField, node ? `a ${kind} cannot contain itself` : `its body lists "${nodeId}", which is not a block`));
      } else if (parentOf.has(nodeId)) {
        issues.push(issueFor(container, "subflow_member", nodeField, `"${node.name}" is already in the body of another loop or parallel`));
      } else if (isBlockType(node.type) && (BLOCK_TYPES[node.type].category === "trigger" || node.type === "response")) {
        issues.push(issueFor(node, "misplaced_block", nodeField, `${node.type === "response" ? "a Response" : "a trigger"} cannot be inside a loop or parallel`));
      } else {
        parentOf.set(nodeId, id);
      }
    });
    const missing = (key: string, why: string) => issues.push(issueFor(container, "invalid_subflow", `${field}.${key}`, why));
    if (kind === "loop") {
      const loop = state.loops[id];
      if (loop.loopType === "for" && loop.iterations === undefined) missing("iterations", "a `for` loop needs `iterations`");
      if (loop.loopType === "forEach" && loop.forEachItems === undefined) missing("forEachItems", "a `forEach` loop needs `forEachItems`");
    } else {
      const parallel = state.parallels[id];
      if (parallel.parallelType === "count" && parallel.count === undefined) missing("count", "a `count` parallel needs `count`");
      if (parallel.parallelType === "collection" && parallel.distribution === undefined) missing("distribution", "a `collection` parallel needs `distribution`");
    }
    if (settings.nodes.length === 0) issues.push(issueFor(container, "subflow_without_start", `${field}.nodes`, `its body is empty`));
  }
  // Containers nested in each other's bodies in a circle would never finish; nothing else about
  // scopes makes sense then, so the caller stops after reporting them.
  const circular = new Set<string>();
  for (const start of [...parentOf.keys()].sort()) {
    const seen = [start];
    let current = parentOf.get(start);
    while (current !== undefined && !seen.includes(current)) {
      seen.push(current);
      current = parentOf.get(current);
    }
    if (current !== undefined) for (const member of seen.slice(seen.indexOf(current))) circular.add(member);
  }
  for (const id of [...circular].sort()) {
    const block = state.blocks[id];
    issues.push(issueFor(block, "subflow_member", `${block.type === "loop" ? "loops" : "parallels"}.${id}.nodes`, `loops and parallels contain each other in a circle`));
  }
  return circular.size === 0;
}

/** Why a handle is not allowed on its source block, or null when it is. */
function checkHandle(source: WorkflowBlock, handle: string | null | undefined): string | null {
  const type = source.type;
  const definition = isBlockType(type) ? BLOCK_TYPES[type] : undefined;
  const choice = definition?.choice;
  if (handle === null || handle === undefined) {
    if (choice) return `edges from a ${type} must use a "${choice.prefix}<id>" or "error" handle`;
    return null;
  }
  if (handle === ERROR_HANDLE) return definition?.category === "trigger" ? `a trigger has no error port` : null;
  if (choice && handle.startsWith(choice.prefix)) {
    const id = handle.slice(choice.prefix.length);
    const entries = source.config[choice.list];
    return Array.isArray(entries) && entries.some((entry) => asRecord(entry)?.id === id) ? null : `"${handle}" names no ${choice.noun} of this block`;
  }
  if (definition?.category === "container" && handle === `${type}-start`) return null;
  return `"${handle}" is not a handle a ${type} block has`;
}

function checkEdges(analysis: Analysis, validBlocks: (id: string) => boolean): Map<string, string[]> {
  const { state, issues, parentOf } = analysis;
  const ids = new Set<string>();
  const pairs = new Set<string>();
  const scopeAdjacency = new Map<string, string[]>();
  state.edges.forEach((edge, index) => {
    const field = `edges[${index}]`;
    const source = state.blocks[edge.source];
    const target = state.blocks[edge.target];
    const owner: Partial<ValidationIssue> = { edgeId: edge.id, ...(source ? { blockId: source.id, blockName: source.name } : {}) };
    const push = (code: IssueCode, key: string, message: string) => issues.push({ ...owner, code, field: `${field}${key}`, message: `Edge "${edge.id}"${source ? ` from "${source.name}"` : ""}: ${message}` });
    if (ids.has(edge.id)) push("duplicate_edge_id", ".id", `the id is used by another edge`);
    ids.add(edge.id);
    if (!source) return push("dangling_edge", ".source", `source "${edge.source}" is not a block`);
    if (!target) return push("dangling_edge", ".target", `target "${edge.target}" is not a block`);
    if (edge.source === edge.target) return push("self_edge", ".target", `a block cannot connect to itself`);
    // Handles depend on the source's config, so they are only checked once both ends are sound;
    // the edge still counts for the rules below, so one bad block does not cascade into others.
    if (validBlocks(edge.source) && validBlocks(edge.target)) {
      const handleProblem = checkHandle(source, edge.sourceHandle);
      if (handleProblem) return push("invalid_edge_handle", ".sourceHandle", handleProblem);
    }
    const key = `${edge.source}\u0000${edge.target}\u0000${edge.sourceHandle ?? ""}`;
    if (pairs.has(key)) return push("duplicate_edge", ".target", `"${source.name}" is already connected to "${target.name}" this way`);
    pairs.add(key);
    if (isBlockType(target.type) && BLOCK_TYPES[target.type].category === "trigger") return push("trigger_has_incoming_edge", ".target", `trigger "${target.name}" cannot have incoming edges`);
    if (source.type === "response") return push("response_has_outgoing_edge", ".source", `a Response ends the run, so nothing can follow it`);
    const isStart = edge.sourceHandle === LOOP_START_HANDLE || edge.sourceHandle === PARALLEL_START_HANDLE;
    if (isStart) {
      if (parentOf.get(edge.target) !== edge.source) return push("cross_scope_edge", ".target", `a ${edge.sourceHandle} edge must lead to a block inside "${source.name}"`);
      return;
    }
    if ((parentOf.get(edge.source) ?? null) !== (parentOf.get(edge.target) ?? null)) {
      return push("cross_scope_edge", ".target", `"${source.name}" and "${target.name}" are not in the same loop or parallel body; edges cannot cross a body's border`);
    }
    const next = scopeAdjacency.get(edge.source) ?? [];
    next.push(edge.target);
    scopeAdjacency.set(edge.source, next);
  });
  for (const [kind, id, settings] of subflowEntries(state)) {
    const container = state.blocks[id];
    if (!container || container.type !== kind || settings.nodes.length === 0) continue;
    const handle = kind === "loop" ? LOOP_START_HANDLE : PARALLEL_START_HANDLE;
    if (!state.edges.some((edge) => edge.source === id && edge.sourceHandle === handle)) {
      issues.push(issueFor(container, "subflow_without_start", `${kind === "loop" ? "loops" : "parallels"}.${id}`, `no "${handle}" edge leads into its body`));
    }
  }
  return scopeAdjacency;
}

/**
 * Cycles among edges of one scope (a body's inner edges or the top level); loops are the only way
 * to repeat. Each group of blocks that reach one another is reported once, on its first block id.
 */
function checkCycles(analysis: Analysis, adjacency: Map<string, string[]>): void {
  const { state, issues } = analysis;
  const reachFrom = (start: string): Set<string> => {
    const seen = new Set<string>();
    const queue = [start];
    while (queue.length > 0) {
      for (const next of adjacency.get(queue.pop() as string) ?? []) {
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    return seen;
  };
  const reach = new Map([...adjacency.keys()].map((id) => [id, reachFrom(id)]));
  const reported = new Set<string>();
  for (const id of sortedIds(Object.fromEntries(reach))) {
    if (reported.has(id) || !reach.get(id)?.has(id)) continue;
    const group = [...(reach.get(id) as Set<string>)].filter((other) => reach.get(other)?.has(id)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const member of group) reported.add(member);
    const block = state.blocks[id];
    const names = group.map((member) => `"${state.blocks[member].name}"`).join(", ");
    issues.push(issueFor(block, "cycle", `blocks.${id}`, `edges form a cycle through ${names}; use a loop to repeat blocks`));
  }
}

function checkTriggers(analysis: Analysis, mode: ValidationMode): void {
  const { state, issues } = analysis;
  const blocks = Object.values(state.blocks);
  const apiTriggers = blocks.filter((block) => block.type === "api_trigger").sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const extra of apiTriggers.slice(1)) {
    issues.push(issueFor(extra, "multiple_api_triggers", `blocks.${extra.id}.type`, `a workflow may have only one API trigger ("${apiTriggers[0].name}" is the first)`));
  }
  if (mode === "deploy" && !blocks.some((block) => block.enabled && isBlockType(block.type) && BLOCK_TYPES[block.type].category === "trigger")) {
    issues.push({ code: "no_trigger", field: "blocks", message: "The workflow has no enabled trigger block, so nothing can start it" });
  }
}

/** The chain of containers around a block, innermost first. */
function containersOf(parentOf: Map<string, string>, id: string): string[] {
  const chain: string[] = [];
  for (let current = parentOf.get(id); current !== undefined; current = parentOf.get(current)) chain.push(current);
  return chain;
}

/** Token sources of a block: its config, plus the loop/parallel settings of a container block. */
function tokensOf(state: WorkflowState, block: WorkflowBlock): { path: string; token: Token }[] {
  if (isBlockType(block.type) && BLOCK_TYPES[block.type].category === "trigger") return [];
  const found = collectTokens(block.config, `blocks.${block.id}.config`);
  const loop = block.type === "loop" ? state.loops[block.id] : undefined;
  if (loop) collectTokens({ iterations: loop.iterations, forEachItems: loop.forEachItems }, `loops.${block.id}`, found);
  const parallel = block.type === "parallel" ? state.parallels[block.id] : undefined;
  if (parallel) collectTokens({ count: parallel.count, distribution: parallel.distribution }, `parallels.${block.id}`, found);
  return found;
}

function checkReferences(analysis: Analysis, adjacency: Map<string, string[]>): void {
  const { state, issues, parentOf, byName } = analysis;
  const assigned = new Set<string>();
  for (const block of Object.values(state.blocks)) {
    if (block.type === "variables" && Array.isArray(block.config.assignments)) for (const entry of block.config.assignments as NamedEntry[]) assigned.add(entry.name);
  }
  const apiTrigger = sortedIds(state.blocks).map((id) => state.blocks[id]).find((block) => block.type === "api_trigger");
  const reach = new Map<string, Set<string>>();
  const reachable = (from: string): Set<string> => {
    let found = reach.get(from);
    if (found) return found;
    found = new Set();
    const queue = [from];
    while (queue.length > 0) {
      for (const next of adjacency.get(queue.pop() as string) ?? []) {
        if (!found.has(next)) {
          found.add(next);
          queue.push(next);
        }
      }
    }
    reach.set(from, found);
    return found;
  };
  for (const block of Object.values(state.blocks)) {
    // A container's own settings are read before its body runs, so they see the enclosing scopes only.
    const chain = containersOf(parentOf, block.id);
    for (const { path, token } of tokensOf(state, block)) {
      if (token.kind === "env") continue;
      const push = (code: IssueCode, message: string) => issues.push(issueFor(block, code, path, `${token.raw} ${message}`));
      if (token.head === "loop" || token.head === "parallel") {
        const enclosing = chain.find((id) => state.blocks[id].type === token.head);
        if (!enclosing) push("reference_outside_subflow", `is only available inside a ${token.head}`);
        else if (!ITERATION_FIELDS.has(String(token.path[0]))) push("unknown_reference", `: a ${token.head} offers only index, item and items`);
        continue;
      }
      if (token.head === "variable") {
        if (!assigned.has(String(token.path[0]))) push("unknown_reference", `: no Variables block sets "${String(token.path[0])}"`);
        continue;
      }
      const target = byName.get(token.head) ?? (token.head === "api" ? apiTrigger : undefined);
      if (!target) {
        push("unknown_reference", `names no block (block names are lower-cased, without spaces)`);
        continue;
      }
      if (target.id === block.id) {
        push("reference_not_upstream", `is this block's own output`);
        continue;
      }
      if (chain.includes(target.id)) {
        if (!ITERATION_FIELDS.has(String(token.path[0]))) push("reference_not_upstream", `: inside "${target.name}" only its index, item and items exist; its results come after it ends`);
        continue;
      }
      const targetScope = parentOf.get(target.id) ?? null;
      if (targetScope !== null && !chain.includes(targetScope)) {
        const container = state.blocks[targetScope];
        push("reference_into_subflow", `reads a block inside "${container.name}" from outside it; use <${normalizeBlockName(container.name)}.results>`);
        continue;
      }
      // The block, or the container holding it, that sits in the same scope as the target.
      const local = targetScope === null ? (chain.length > 0 ? chain[chain.length - 1] : block.id) : chain.indexOf(targetScope) === 0 ? block.id : chain[chain.indexOf(targetScope) - 1];
      if (!reachable(target.id).has(local)) push("reference_not_upstream", `reads "${target.name}", which does not run before this block (connect it upstream)`);
    }
  }
}

/**
 * Validates a state. In `save` mode work in progress is fine (no trigger yet); `deploy` mode, used
 * by deploys and runs, also requires an enabled trigger. A state past a cap (state-caps.ts) gets
 * only the cap's issue: the rest is not looked at.
 */
export function validateWorkflowState(input: unknown, mode: ValidationMode = "save"): ValidationResult {
  const capped = stateCapIssues(input);
  if (capped.length > 0) return { ok: false, issues: capped };
  const parsed = workflowStateSchema.safeParse(input);
  if (!parsed.success) return { ok: false, issues: zodIssues(parsed.error, input, "", "invalid_shape", "Workflow state", {}) };
  const analysis: Analysis = { state: parsed.data, issues: [], parentOf: new Map(), byName: new Map(), invalid: new Set() };
  checkBlocks(analysis);
  if (!checkSubflows(analysis)) return { ok: false, issues: analysis.issues };
  const adjacency = checkEdges(analysis, (id) => !analysis.invalid.has(id));
  checkCycles(analysis, adjacency);
  checkTriggers(analysis, mode);
  if (!analysis.issues.some((issue) => issue.code === "cycle")) checkReferences(analysis, adjacency);
  return analysis.issues.length === 0 ? { ok: true, state: analysis.state } : { ok: false, issues: analysis.issues };
}

/** Like validateWorkflowState, but returns the parsed state or throws a ValidationError. */
export function parseWorkflowState(input: unknown, mode: ValidationMode = "save"): WorkflowState {
  const result = validateWorkflowState(input, mode);
  if (!result.ok) throw new ValidationError(result.issues);
  return result.state;
}
