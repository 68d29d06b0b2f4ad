/**
 * The executor's entry points: `compileWorkflow` (parse and compile a state once) and
 * `executeWorkflow` (run it from a trigger). Pure TypeScript with no I/O of its own: the sandbox,
 * the clock and the file store are injected services, and the block handlers are an argument
 * (runs/run-workflow.ts passes the registry), so the same code runs under Deno (edge functions)
 * and Node (vitest, the benchmark) and loads no handler itself.
 */
import type { HandledBlockType } from "../blocks/specs.ts";
import type { BlockHandlers } from "../core/block-handler.ts";
import { systemClock } from "../core/clock.ts";
import { defaultOutboundServices } from "../outbound/services.ts";
import type { ExecutionResult, ExecutorServices, RunStatus, TraceSpan, TriggerRequest } from "../core/context.ts";
import { BlockError, messageOf, WorkflowError, type BlockIdentity } from "../core/errors.ts";
import { memoryFileStore } from "../core/files.ts";
import { Replay, RunParked, type Durability } from "./replay.ts";
import { compileWorkflow, rootPlan, type CompiledWorkflow } from "./graph.ts";
import { newFrame, ResponseSent, Run, snapshotOf } from "./run-state.ts";
import { defaultSandbox } from "../sandbox/sandbox-choice.ts";
import { runScope } from "./scheduling.ts";
import { syncRunTimeoutMs } from "./time-budget.ts";
import { budgetContext, budgetTrace } from "./trace-budget.ts";
import { chooseTrigger } from "./trigger-choice.ts";
import type { RunTrace } from "../tracing/trace-context.ts";

/** Parses and compiles a state once, to run it many times (graph.ts). */
export { compileWorkflow };

/** What executeWorkflow needs. */
export interface ExecuteOptions {
  /** A compiled workflow (compile once, run many times) or a state, compiled here. */
  workflow: CompiledWorkflow | unknown;
  trigger: TriggerRequest;
  /** The workspace's environment variables, for `{{NAME}}`. */
  env?: Readonly<Record<string, string>>;
  /** Aborting it cancels the run. */
  signal?: AbortSignal;
  /** The run's time limit; by default a synchronous run's (time-budget.ts). */
  timeoutMs?: number;
  executionId?: string;
  /** The billing account the run is charged to, so the sandbox can share its threads fairly between accounts. */
  account?: string | null;
  services?: Partial<ExecutorServices>;
  /** What each block type does: blocks/handlers.ts's registry, which runs/run-workflow.ts passes in. */
  handlers: BlockHandlers<HandledBlockType>;
  /** The run's trace ids (admit's or claim's `trace`): outbound calls then carry a `traceparent` naming their block's span. */
  trace?: RunTrace | null;
  /** Called as each block (not iteration) finishes, with secrets masked; errors thrown by it are ignored. */
  onBlockComplete?: (span: TraceSpan) => void;
  /** Called with each piece of text a block streams (`BlockRun.emitChunk`), tagged with its block id, secrets masked; errors thrown by it are ignored. */
  onChunk?: (blockId: string, chunk: string) => void;
  /**
   * Makes the run durable (durable.ts): checkpoints at block boundaries, replay of a history (an
   * earlier attempt's, or a re-run's original), long Waits that park. The async worker's records as
   * it goes; a sync run's collects in memory and never parks.
   */
  durable?: Durability;
}

function isCompiled(workflow: unknown): workflow is CompiledWorkflow {
  return workflow !== null && typeof workflow === "object" && "rootPlans" in workflow && "byName" in workflow;
}

/**
 * Runs a workflow from a trigger. A state the compiler cannot build throws a ValidationError and
 * an unknown trigger a WorkflowError (both request errors); everything that happens once the run has
 * started, failures included, is reported in the returned result, with the environment's values
 * masked (redaction.ts): blocks used the real values, nothing that leaves the run shows them. The
 * trace and the context are kept to their budgets (trace-budget.ts); the output never is.
 */
export async function executeWorkflow(options: ExecuteOptions): Promise<ExecutionResult> {
  const workflow = isCompiled(options.workflow) ? options.workflow : compileWorkflow(options.workflow);
  const triggerNode = chooseTrigger(workflow, options.trigger);
  const clock = options.services?.clock ?? systemClock;
  const newId = options.services?.newId ?? (() => crypto.randomUUID());
  const services: ExecutorServices = {
    sandbox: options.services?.sandbox ?? defaultSandbox(),
    clock,
    newId,
    files: options.services?.files ?? memoryFileStore(newId, () => clock.now()),
    outbound: options.services?.outbound ?? defaultOutboundServices(),
  };
  const startTime = Date.now();
  const timeoutMs = options.timeoutMs ?? syncRunTimeoutMs();
  const run = new Run(
    workflow,
    options.executionId ?? newId(),
    options.trigger,
    triggerNode,
    options.env ?? {},
    services,
    options.handlers,
    startTime + timeoutMs,
    options.onBlockComplete,
    options.onChunk,
  );
  run.account = options.account ?? null;
  run.trace = options.trace ?? null;
  if (options.durable) {
    run.replay = new Replay(options.durable);
    for (const [name, value] of Object.entries(run.replay.variables ?? {})) run.variables.set(name, value);
  }
  const timer = setTimeout(() => run.cancellation.abort(new WorkflowError("RUN_TIMEOUT", `the run ran past its time limit of ${timeoutMs} ms`)), timeoutMs);
  const cancel = () => run.cancellation.abort(new WorkflowError("CANCELLED", "the run was cancelled"));
  if (options.signal?.aborted) cancel();
  options.signal?.addEventListener("abort", cancel, { once: true });

  const root = newFrame(null, null, null);
  let status: RunStatus = "success";
  let error: ExecutionResult["error"] = null;
  let resumeAt: number | null = null;
  try {
    await runScope(run, workflow.root, root, rootPlan(workflow, triggerNode), run.cancellation);
  } catch (caught) {
    if (caught instanceof RunParked) {
      status = "parked";
      resumeAt = caught.resumeAt;
    } else if (!(caught instanceof ResponseSent)) {
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
  options.durable?.close?.((value) => run.redactor.redact(value));
  const response = run.response;
  const result = run.redactor.redact<ExecutionResult>({
    executionId: run.executionId,
    success: status === "success",
    status,
    output: response ?? root.final ?? root.last,
    response: response ? { status: response.status as number, headers: response.headers as Record<string, string>, body: response.data } : null,
    error,
    traceSpans: root.spans,
    context: snapshotOf(run, root),
    modelUsage: run.modelUsage,
    ...(resumeAt !== null ? { resumeAt: new Date(resumeAt).toISOString() } : {}),
    metadata: {
      trigger: options.trigger.kind,
      triggerBlockId: triggerNode.id,
      startTime: new Date(startTime).toISOString(),
      endTime: new Date(endTime).toISOString(),
      durationMs: endTime - startTime,
      blocksExecuted: run.blocksExecuted,
    },
  });
  // Without secrets to mask the result holds the run's own objects, whose sizes were measured already.
  return { ...result, traceSpans: budgetTrace(result.traceSpans, run.sizes), context: budgetContext(result.context, run.sizes) };
}
