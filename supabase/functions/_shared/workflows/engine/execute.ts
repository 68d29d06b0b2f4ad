/**
 * The workflow executor: pure TypeScript, no I/O of its own (the sandbox, clock and file store are
 * injected services).
 *
 * Scheduling (decisions, "Executor semantics"): a block starts as soon as every one of its incoming
 * edges is settled and at least one was followed. An edge is settled when its source finishes
 * (followed or not, by the source's outcome: success, error, the Condition's choice, the Router's
 * route) or is skipped. A block whose edges all settle unfollowed is skipped and settles its own
 * edges unfollowed, so a branch a Condition did not choose is deactivated all the way down, while a
 * block joining two branches still runs once its live inputs are done. Independent blocks are in
 * flight at the same time; the spec's "parallel layers" are what this produces.
 *
 * Loops and parallels are containers: their body is a scope of its own, run once per iteration (a
 * loop, one after the other) or per branch (a parallel, up to 20 at once), each in a fresh frame
 * holding that iteration's outputs. Results come back as arrays, one entry per iteration.
 */
import { MAX_CONCURRENT_BRANCHES, MAX_ITERATIONS } from "../state/catalogue.ts";
import { BLOCK_HANDLERS, type HandledBlockType } from "../blocks/index.ts";
import { asRecord, preview, type BlockHandler, type BlockRun } from "../blocks/block-handler.ts";
import type {
  BlockOutput,
  Clock,
  ExecutionResult,
  ExecutionSnapshot,
  ExecutorServices,
  RunStatus,
  TraceSpan,
  TriggerKind,
  TriggerRequest,
} from "./context.ts";
import { Cancellation } from "./cancellation.ts";
import { BlockError, WorkflowError, messageOf, type BlockIdentity } from "./errors.ts";
import { compileWorkflow, isTrigger, rootPlan, type CompiledEdge, type CompiledNode, type CompiledScope, type CompiledWorkflow, type ScopePlan } from "./graph.ts";
import { memoryFileStore } from "../blocks/input-format.ts";
import { formatPath, getPath, type EnvToken, type ReferenceToken } from "./references.ts";
import type { TokenSource } from "./resolver.ts";
import { quickjsSandbox } from "./sandbox.ts";
import { describeBlock } from "../state/validate.ts";

/** How long a run may take unless the caller says otherwise (Sim's free-plan sync limit). */
export const DEFAULT_RUN_TIMEOUT_MS = 300_000;

/** What executeWorkflow needs. */
export interface ExecuteOptions {
  /** A compiled workflow (compile once, run many times) or a state, validated and compiled here. */
  workflow: CompiledWorkflow | unknown;
  trigger: TriggerRequest;
  /** The workspace's environment variables, for `{{NAME}}`. */
  env?: Readonly<Record<string, string>>;
  /** Aborting it cancels the run. */
  signal?: AbortSignal;
  timeoutMs?: number;
  executionId?: string;
  services?: Partial<ExecutorServices>;
  /** Replaces built-in handlers (tests use it to observe scheduling). */
  handlers?: Partial<Record<HandledBlockType, BlockHandler<unknown>>>;
  /** Called as each block (not iteration) finishes; errors thrown by it are ignored. */
  onBlockComplete?: (span: TraceSpan) => void;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    }),
};

/** Marks the root scope's abort when a Response block has answered: the run is over, successfully. */
class ResponseSent {
  readonly reason = "response sent";
}

type NodeStatus = "running" | "success" | "error" | "skipped";

interface Iteration {
  container: CompiledNode;
  kind: "loop" | "parallel";
  index: number;
  item: unknown;
  /** The collection, or null for `for` loops and `count` parallels. */
  items: unknown[] | null;
}

/** Outputs and states of one scope run: the top level, or one iteration of a body. */
interface Frame {
  parent: Frame | null;
  scopeId: string | null;
  iteration: Iteration | null;
  /** Appended to block ids to name instances: `""` at the top, `[loop1:2]` inside. */
  key: string;
  status: Map<string, NodeStatus>;
  outputs: Map<string, BlockOutput>;
  spans: TraceSpan[];
  /** The output of the last block without successors that finished: the frame's result. */
  final: BlockOutput | null;
  /** The output of the last block that finished, the result when no block without successors ran. */
  last: BlockOutput | null;
  tokens: TokenSource | null;
}

interface Outcome {
  output: BlockOutput;
  failed: boolean;
}

/** State shared by every scope of one run. */
class Run {
  readonly variables = new Map<string, unknown>();
  readonly decisions: ExecutionSnapshot["decisions"] = { condition: {}, router: {} };
  readonly subflows: ExecutionSnapshot["subflows"] = {};
  readonly activePath: string[] = [];
  /** The root of the cancellation tree: run timeout, the caller's signal and a Response abort it. */
  readonly cancellation = new Cancellation();
  blocksExecuted = 0;
  response: BlockOutput | null = null;

  constructor(
    readonly workflow: CompiledWorkflow,
    readonly executionId: string,
    readonly trigger: TriggerRequest,
    readonly triggerNode: CompiledNode,
    readonly env: Readonly<Record<string, string>>,
    readonly services: ExecutorServices,
    readonly handlers: Record<HandledBlockType, BlockHandler<unknown>>,
    readonly deadline: number,
    readonly onBlockComplete: ((span: TraceSpan) => void) | undefined,
  ) {}
}

function newFrame(parent: Frame | null, scopeId: string | null, iteration: Iteration | null): Frame {
  const key = iteration ? `${parent?.key ?? ""}[${iteration.container.id}:${iteration.index}]` : "";
  return { parent, scopeId, iteration, key, status: new Map(), outputs: new Map(), spans: [], final: null, last: null, tokens: null };
}

function referenceError(token: ReferenceToken, why: string): WorkflowError {
  return new WorkflowError("REFERENCE_NOT_FOUND", `reference ${token.raw} failed: ${why}`);
}

/** Walks the rest of a reference's path, or throws naming the step that finds nothing. */
function walkOrThrow(token: ReferenceToken, value: unknown, from: number, owner: string): unknown {
  if (from >= token.path.length) return value;
  const lookup = getPath(value, token.path, from);
  if (lookup.found) return lookup.value;
  const missing = formatPath(token.path.slice(0, lookup.depth + 1));
  const offered = lookup.available.length > 0 ? ` (it has ${lookup.available.join(", ")})` : "";
  throw referenceError(token, `${owner} has no "${missing}"${offered}`);
}

function iterationValue(iteration: Iteration, token: ReferenceToken): unknown {
  const field = token.path[0];
  const owner = `${iteration.kind} "${iteration.container.identity.name}"`;
  if (field === "index") return walkOrThrow(token, iteration.index, 1, `${owner}'s index`);
  if (field === "item" || field === "items") {
    if (iteration.items === null) throw referenceError(token, `${owner} repeats a count, so it has no items`);
    return walkOrThrow(token, field === "item" ? iteration.item : iteration.items, 1, `${owner}'s ${field}`);
  }
  throw referenceError(token, `${owner} offers only index, item and items`);
}

function resolveReference(run: Run, frame: Frame, token: ReferenceToken): unknown {
  const head = token.head;
  if (head === "loop" || head === "parallel") {
    for (let current: Frame | null = frame; current; current = current.parent) {
      if (current.iteration?.kind === head) return iterationValue(current.iteration, token);
    }
    throw referenceError(token, `there is no enclosing ${head}`);
  }
  if (head === "variable") {
    const name = String(token.path[0]);
    if (!run.variables.has(name)) throw referenceError(token, `no Variables block has set "${name}" yet`);
    return walkOrThrow(token, run.variables.get(name), 1, `variable "${name}"`);
  }
  const target = run.workflow.byName.get(head) ?? (head === "api" ? run.workflow.apiTrigger : null);
  if (!target) throw referenceError(token, `there is no block named "${head}"`);
  for (let current: Frame | null = frame; current; current = current.parent) {
    if (current.iteration?.container === target) return iterationValue(current.iteration, token);
  }
  for (let current: Frame | null = frame; current; current = current.parent) {
    if (current.scopeId !== target.scopeId) continue;
    const status = current.status.get(target.id);
    if (status === "success" || status === "error") return walkOrThrow(token, current.outputs.get(target.id), 0, `the output of "${target.identity.name}"`);
    if (status === "skipped") return null;
    throw referenceError(token, `"${target.identity.name}" has not run yet`);
  }
  throw referenceError(token, `"${target.identity.name}" is inside a loop or parallel this block is not in`);
}

function tokensOf(run: Run, frame: Frame): TokenSource {
  frame.tokens ??= {
    ref: (token: ReferenceToken) => resolveReference(run, frame, token),
    env: (token: EnvToken) => {
      if (!Object.hasOwn(run.env, token.name)) throw new WorkflowError("ENV_VAR_NOT_FOUND", `environment variable {{${token.name}}} is not set in this workspace`);
      return run.env[token.name];
    },
  };
  return frame.tokens;
}

function toBlockError(node: CompiledNode, error: unknown): BlockError {
  if (error instanceof BlockError) return error;
  if (error instanceof WorkflowError) return new BlockError(error.code, `${describeBlock(node.identity)}: ${error.message}`, node.identity, { cause: error });
  return new BlockError("BLOCK_FAILED", `${describeBlock(node.identity)}: ${messageOf(error)}`, node.identity, { cause: error });
}

function follows(rule: CompiledEdge["rule"], outcome: Outcome): boolean {
  if (outcome.failed) return rule.on === "error";
  switch (rule.on) {
    case "success":
      return true;
    case "error":
      return false;
    case "condition":
      return outcome.output.selectedOption === rule.id;
    case "router":
      return outcome.output.selectedRoute === rule.id;
  }
}

function runHandler(run: Run, node: CompiledNode, input: unknown, cancellation: Cancellation): BlockOutput | Promise<BlockOutput> {
  const handler = run.handlers[node.type as HandledBlockType];
  const configured = asRecord(input)?.timeoutMs;
  const timeoutMs = typeof configured === "number" ? configured : handler.timeoutMs(input);
  const ownDeadline = Date.now() + timeoutMs;
  const deadline = Math.min(run.deadline, ownDeadline);
  // Made only when the handler asks for its signal or turns out to be asynchronous.
  let controller: AbortController | null = null;
  const controllerOf = (): AbortController => (controller ??= cancellation.controller());
  const blockRun: BlockRun<unknown> = {
    block: node.identity,
    executionId: run.executionId,
    input,
    get signal() {
      return controllerOf().signal;
    },
    deadline,
    services: run.services,
    variables: run.variables,
    trigger: node === run.triggerNode ? run.trigger : null,
    targetsOf: (handle) => node.targets.get(handle) ?? [],
  };
  let result: BlockOutput | Promise<BlockOutput>;
  try {
    result = handler.execute(blockRun);
  } catch (error) {
    if (controller) cancellation.detach(controller);
    throw error;
  }
  if (!(result instanceof Promise)) {
    if (controller) cancellation.detach(controller);
    return result;
  }
  const pending = result;
  const active = controllerOf();
  return new Promise<BlockOutput>((resolve, reject) => {
    const onAbort = () => reject(active.signal.reason);
    // Only the block's own timeout needs a timer: when the run's deadline comes first, the run's
    // timer cancels every block with RUN_TIMEOUT (a second timer here raced it, and could report
    // the run's time limit as this block's).
    const timer = ownDeadline < run.deadline
      ? setTimeout(() => active.abort(new WorkflowError("BLOCK_TIMEOUT", `ran past its timeout of ${timeoutMs} ms`)), Math.max(0, ownDeadline - Date.now()))
      : undefined;
    const cleanup = () => {
      clearTimeout(timer);
      active.signal.removeEventListener("abort", onAbort);
      cancellation.detach(active);
    };
    if (active.signal.aborted) onAbort();
    else active.signal.addEventListener("abort", onAbort, { once: true });
    pending.then(
      (output) => {
        cleanup();
        resolve(output);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}

/** Reads a count (`for`, `count`) or a collection (`forEach`, `collection`) from resolved settings. */
function iterationsOf(node: CompiledNode, settings: Record<string, unknown>): { count: number; items: unknown[] | null } {
  const subflow = node.subflow as NonNullable<CompiledNode["subflow"]>;
  const noun = subflow.kind === "loop" ? "iterations" : "branches";
  const cap = (count: number) => {
    if (count > MAX_ITERATIONS) throw new WorkflowError("LIMIT_EXCEEDED", `asks for ${count} ${noun}; a ${subflow.kind} may have at most ${MAX_ITERATIONS.toLocaleString("en")}`);
    return count;
  };
  if (subflow.mode === "for" || subflow.mode === "count") {
    const field = subflow.mode === "for" ? "iterations" : "count";
    const raw = settings[field];
    const count = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
    if (typeof count !== "number" || !Number.isInteger(count) || count < 0) throw new WorkflowError("BLOCK_FAILED", `${field} must be a whole number of at least 0 (got ${preview(raw)})`);
    return { count: cap(count), items: null };
  }
  const field = subflow.mode === "forEach" ? "forEachItems" : "distribution";
  let raw = settings[field];
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new WorkflowError("BLOCK_FAILED", `${field} must be an array or object, or JSON text of one (got ${preview(raw)})`);
    }
  }
  let items: unknown[];
  if (Array.isArray(raw)) items = raw;
  else if (raw !== null && typeof raw === "object") items = Object.entries(raw).map(([key, value]) => ({ key, value }));
  else throw new WorkflowError("BLOCK_FAILED", `${field} must be an array or object (got ${preview(raw)})`);
  return { count: cap(items.length), items };
}

function within(error: unknown, node: CompiledNode, index: number): unknown {
  if (!(error instanceof BlockError)) return error;
  const kind = node.subflow?.kind === "loop" ? "iteration" : "branch";
  return new BlockError(error.code, `${error.message} (in ${kind} ${index} of ${node.subflow?.kind} "${node.identity.name}")`, error.block, { cause: error });
}

async function runSubflow(run: Run, node: CompiledNode, frame: Frame, input: unknown, cancellation: Cancellation, span: TraceSpan): Promise<BlockOutput> {
  const subflow = node.subflow as NonNullable<CompiledNode["subflow"]>;
  const { count, items } = iterationsOf(node, asRecord(input) ?? {});
  const instance = `${node.id}${frame.key}`;
  const progress = { kind: subflow.kind, total: count, completed: 0 };
  run.subflows[instance] = progress;
  const results: unknown[] = new Array(count).fill(null);
  const children: TraceSpan[] = new Array(count);
  span.children = children;

  const runOne = async (index: number, branch: Cancellation): Promise<void> => {
    const child = newFrame(frame, node.id, { container: node, kind: subflow.kind, index, item: items ? items[index] : index, items });
    const startedAt = Date.now();
    const started = performance.now();
    const iterationSpan: TraceSpan = {
      id: `${node.id}${child.key}`,
      blockId: node.id,
      name: `${node.identity.name} #${index}`,
      type: subflow.kind === "loop" ? "loop-iteration" : "parallel-branch",
      status: "success",
      startedAt: new Date(startedAt).toISOString(),
      endedAt: "",
      durationMs: 0,
      iteration: { containerId: node.id, kind: subflow.kind, index },
      children: child.spans,
    };
    children[index] = iterationSpan;
    try {
      await runScope(run, subflow.body, child, subflow.plan, branch);
      results[index] = child.final ?? child.last;
      progress.completed++;
    } catch (error) {
      iterationSpan.status = branch.aborted ? "cancelled" : "error";
      throw within(error, node, index);
    } finally {
      iterationSpan.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      iterationSpan.endedAt = new Date(startedAt + iterationSpan.durationMs).toISOString();
    }
  };

  try {
    if (subflow.kind === "loop") {
      for (let index = 0; index < count; index++) await runOne(index, cancellation);
      return { results, iterations: count };
    }
    return await runBranches(count, runOne, cancellation, results);
  } finally {
    // After a failure, iterations that never started have no span.
    span.children = children.filter((child) => child !== undefined);
  }
}

/** Runs a parallel's branches in a sliding window of 20; the first failure cancels the others. */
async function runBranches(count: number, runOne: (index: number, branch: Cancellation) => Promise<void>, cancellation: Cancellation, results: unknown[]): Promise<BlockOutput> {
  const branches = new Cancellation(cancellation);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < count) {
      const index = next++;
      try {
        await runOne(index, branches);
      } catch (error) {
        if (failure === null) {
          failure = { error };
          branches.abort(error);
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(MAX_CONCURRENT_BRANCHES, count) }, worker));
  } finally {
    branches.release();
  }
  if (failure !== null) throw cancellation.aborted ? cancellation.reason : (failure as { error: unknown }).error;
  return { results, branches: count };
}

function finishSpan(span: TraceSpan, startedAt: number, started: number): void {
  span.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  span.endedAt = new Date(startedAt + span.durationMs).toISOString();
}

async function executeNode(run: Run, node: CompiledNode, frame: Frame, cancellation: Cancellation): Promise<Outcome> {
  const startedAt = Date.now();
  const started = performance.now();
  const span: TraceSpan = {
    id: `${node.id}${frame.key}`,
    blockId: node.id,
    name: node.identity.name,
    type: node.type,
    status: "success",
    startedAt: new Date(startedAt).toISOString(),
    endedAt: "",
    durationMs: 0,
  };
  if (frame.iteration) span.iteration = { containerId: frame.iteration.container.id, kind: frame.iteration.kind, index: frame.iteration.index };
  frame.spans.push(span);
  run.blocksExecuted++;
  try {
    const input = node.config.resolve(tokensOf(run, frame));
    span.input = input;
    const output = node.subflow ? await runSubflow(run, node, frame, input, cancellation, span) : await runHandler(run, node, input, cancellation);
    span.output = output;
    finishSpan(span, startedAt, started);
    notify(run, span);
    return { output, failed: false };
  } catch (caught) {
    finishSpan(span, startedAt, started);
    if (cancellation.aborted) {
      span.status = "cancelled";
      notify(run, span);
      throw cancellation.reason;
    }
    if (Date.now() >= run.deadline) {
      // User code stopped by the run's deadline reports its own timeout; the run's is the real cause.
      const timeout = runTimeout(run);
      span.status = "cancelled";
      run.cancellation.abort(timeout);
      notify(run, span);
      throw timeout;
    }
    const error = toBlockError(node, caught);
    span.status = "error";
    span.error = error.message;
    span.errorCode = error.code;
    if (node.hasErrorEdge) {
      const output: BlockOutput = { error: error.message, code: error.code };
      span.errorHandled = true;
      span.output = output;
      notify(run, span);
      return { output, failed: true };
    }
    notify(run, span);
    throw error;
  }
}

function notify(run: Run, span: TraceSpan): void {
  if (!run.onBlockComplete) return;
  try {
    run.onBlockComplete(span);
  } catch {
    // An observer's failure must not change the run it observes.
  }
}

function runTimeout(run: Run): WorkflowError {
  const reason = run.cancellation.reason;
  return reason instanceof WorkflowError && reason.code === "RUN_TIMEOUT" ? reason : new WorkflowError("RUN_TIMEOUT", "the run ran past its time limit");
}

/** Runs one scope (the top level or one iteration of a body) to completion. */
function runScope(run: Run, scope: CompiledScope, frame: Frame, plan: ScopePlan, parent: Cancellation): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const nodes = scope.nodes;
    const remaining = plan.incoming.slice();
    const followed = new Int32Array(nodes.length);
    if (parent.aborted) return reject(parent.reason);
    const cancellation = new Cancellation(parent);
    let inFlight = 0;
    let failure: { error: unknown } | null = null;
    let settled = false;

    const finish = () => {
      if (inFlight > 0 || settled) return;
      settled = true;
      cancellation.release();
      if (failure !== null) reject(failure.error);
      else resolve();
    };
    const skip = (node: CompiledNode) => {
      frame.status.set(node.id, "skipped");
      for (const edge of node.outgoing) settle(edge.target, false);
    };
    const settle = (index: number, isFollowed: boolean) => {
      if (isFollowed) followed[index]++;
      if (--remaining[index] === 0) {
        if (followed[index] > 0) start(nodes[index]);
        else skip(nodes[index]);
      }
    };
    const complete = (node: CompiledNode, outcome: Outcome) => {
      frame.status.set(node.id, outcome.failed ? "error" : "success");
      frame.outputs.set(node.id, outcome.output);
      if (node.isSink) frame.final = outcome.output;
      frame.last = outcome.output;
      const instance = `${node.id}${frame.key}`;
      if (frame.parent === null) run.activePath.push(node.id);
      if (!outcome.failed && node.type === "condition") run.decisions.condition[instance] = (outcome.output.selectedOption as string | null) ?? null;
      if (!outcome.failed && node.type === "router") run.decisions.router[instance] = outcome.output.selectedRoute as string;
      if (!outcome.failed && node.type === "response") {
        run.response = outcome.output;
        run.cancellation.abort(new ResponseSent());
      }
      for (const edge of node.outgoing) settle(edge.target, follows(edge.rule, outcome));
    };
    function start(node: CompiledNode): void {
      if (failure !== null || cancellation.aborted) return;
      if (!node.block.enabled) return skip(node);
      inFlight++;
      frame.status.set(node.id, "running");
      executeNode(run, node, frame, cancellation).then(
        (outcome) => {
          inFlight--;
          if (failure === null && !cancellation.aborted) complete(node, outcome);
          finish();
        },
        (error: unknown) => {
          inFlight--;
          if (failure === null) {
            failure = { error };
            cancellation.abort(error);
          }
          finish();
        },
      );
    }

    for (let index = 0; index < nodes.length; index++) if (plan.reachable[index] === 0) frame.status.set(nodes[index].id, "skipped");
    for (const entry of plan.entries) {
      followed[entry]++;
      if (remaining[entry] === 0) start(nodes[entry]);
    }
    finish();
  });
}

function chooseTrigger(workflow: CompiledWorkflow, request: TriggerRequest): CompiledNode {
  const triggers = [...workflow.nodes.values()].filter((node) => isTrigger(node) && node.block.enabled);
  if (request.blockId !== undefined) {
    const node = workflow.nodes.get(request.blockId);
    if (!node || !isTrigger(node)) throw new WorkflowError("INVALID_INPUT", `block "${request.blockId}" is not a trigger of this workflow`);
    if (!node.block.enabled) throw new WorkflowError("INVALID_INPUT", `trigger "${node.identity.name}" is disabled`);
    return node;
  }
  const ofType = (type: string) => triggers.filter((node) => node.type === type);
  const only = (type: string, what: string): CompiledNode => {
    const found = ofType(type);
    if (found.length === 1) return found[0];
    throw new WorkflowError("INVALID_INPUT", found.length === 0 ? `the workflow has no enabled ${what} trigger` : `the workflow has several ${what} triggers; say which one to start from`);
  };
  const kinds: Record<TriggerKind, () => CompiledNode> = {
    api: () => only("api_trigger", "API"),
    webhook: () => only("generic_webhook", "webhook"),
    schedule: () => only("schedule", "schedule"),
    chat: () => only("chat_trigger", "chat"),
    manual: () => ofType("manual_trigger")[0] ?? ofType("api_trigger")[0] ?? (triggers.length === 1 ? triggers[0] : only("manual_trigger", "manual")),
  };
  return kinds[request.kind]();
}

function snapshotOf(run: Run, root: Frame): ExecutionSnapshot {
  const blockStates: ExecutionSnapshot["blockStates"] = {};
  for (const node of run.workflow.root.nodes) {
    const status = root.status.get(node.id);
    if (status === "success" || status === "error") blockStates[node.id] = { status, output: root.outputs.get(node.id) };
    else if (status === "skipped") blockStates[node.id] = { status };
  }
  return {
    blockStates,
    activePath: run.activePath,
    decisions: run.decisions,
    subflows: run.subflows,
    variables: Object.fromEntries(run.variables),
    environment: Object.keys(run.env).sort(),
  };
}

function isCompiled(workflow: unknown): workflow is CompiledWorkflow {
  return workflow !== null && typeof workflow === "object" && "rootPlans" in workflow && "byName" in workflow;
}

/**
 * Runs a workflow from a trigger. A state that is not runnable throws a ValidationError and an
 * unknown trigger a WorkflowError (both request errors); everything that happens once the run has
 * started, failures included, is reported in the returned result.
 */
export async function executeWorkflow(options: ExecuteOptions): Promise<ExecutionResult> {
  const workflow = isCompiled(options.workflow) ? options.workflow : compileWorkflow(options.workflow);
  const triggerNode = chooseTrigger(workflow, options.trigger);
  const clock = options.services?.clock ?? systemClock;
  const newId = options.services?.newId ?? (() => crypto.randomUUID());
  const services: ExecutorServices = {
    sandbox: options.services?.sandbox ?? quickjsSandbox,
    clock,
    newId,
    files: options.services?.files ?? memoryFileStore(newId, () => clock.now()),
  };
  const startTime = Date.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS;
  const run = new Run(
    workflow,
    options.executionId ?? newId(),
    options.trigger,
    triggerNode,
    options.env ?? {},
    services,
    { ...BLOCK_HANDLERS, ...options.handlers } as Record<HandledBlockType, BlockHandler<unknown>>,
    startTime + timeoutMs,
    options.onBlockComplete,
  );
  const timer = setTimeout(() => run.cancellation.abort(new WorkflowError("RUN_TIMEOUT", `the run ran past its time limit of ${timeoutMs} ms`)), timeoutMs);
  const cancel = () => run.cancellation.abort(new WorkflowError("CANCELLED", "the run was cancelled"));
  if (options.signal?.aborted) cancel();
  options.signal?.addEventListener("abort", cancel, { once: true });

  const root = newFrame(null, null, null);
  let status: RunStatus = "success";
  let error: ExecutionResult["error"] = null;
  try {
    await runScope(run, workflow.root, root, rootPlan(workflow, triggerNode), run.cancellation);
  } catch (caught) {
    if (!(caught instanceof ResponseSent)) {
      const code = caught instanceof WorkflowError ? caught.code : "BLOCK_FAILED";
      status = code === "RUN_TIMEOUT" ? "timeout" : code === "CANCELLED" ? "cancelled" : "error";
      const block: BlockIdentity | null = caught instanceof BlockError ? caught.block : null;
      error = { code, message: messageOf(caught), block };
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", cancel);
  }
  const endTime = Date.now();
  const response = run.response;
  return {
    executionId: run.executionId,
    success: status === "success",
    status,
    output: response ?? root.final ?? root.last,
    response: response ? { status: response.status as number, headers: response.headers as Record<string, string>, body: response.data } : null,
    error,
    traceSpans: root.spans,
    context: snapshotOf(run, root),
    metadata: {
      trigger: options.trigger.kind,
      triggerBlockId: triggerNode.id,
      startTime: new Date(startTime).toISOString(),
      endTime: new Date(endTime).toISOString(),
      durationMs: endTime - startTime,
      blocksExecuted: run.blocksExecuted,
    },
  };
}
