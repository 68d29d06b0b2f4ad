/**
 * Runs one block instance: resolves its config against the run so far, hands it to the block's
 * handler (or, for a loop or parallel, to containers.ts) under the block's own timeout, and records
 * a trace span. A failure becomes a BlockError naming the block; with an `error` edge it becomes
 * the block's output (`{error, code}`) and the run goes on.
 */
import type { BlockRun } from "../core/block-handler.ts";
import type { HandledBlockType } from "../blocks/specs.ts";
import { chargeOutput } from "./budgets.ts";
import type { Cancellation } from "./cancellation.ts";
import { runContainer } from "./containers.ts";
import type { BlockOutput, TraceSpan } from "../core/context.ts";
import type { ModelUsage } from "../outbound/model-cost.ts";
import { awaitApproval, instanceKey, pauseBlock, recordCompletion } from "./durable.ts";
import type { CompletedCheckpoint } from "./replay.ts";
import { BlockError, describeBlock, messageOf, WorkflowError } from "../core/errors.ts";
import { isTrigger, type CompiledNode } from "./graph.ts";
import { tokensOf } from "./run-references.ts";
import type { Frame, Outcome, Run, ScopeRunner } from "./run-state.ts";
import { closeSpan, notify, openBlockSpan } from "./trace-spans.ts";
import { asRecord } from "../core/values.ts";
import { blockSpanId, traceHeaders } from "../tracing/trace-context.ts";

function toBlockError(node: CompiledNode, error: unknown): BlockError {
  if (error instanceof BlockError) return error;
  if (error instanceof WorkflowError) return new BlockError(error.code, `${describeBlock(node.identity)}: ${error.message}`, node.identity, { cause: error, output: error.output });
  return new BlockError("BLOCK_FAILED", `${describeBlock(node.identity)}: ${messageOf(error)}`, node.identity, { cause: error });
}

/**
 * A block's streamed text on its way to the run's listener. With secrets to mask, a chunk ending
 * in what may be the start of a secret keeps that end back until the next chunk shows whether it
 * is one (a model may split a secret across tokens), so each secret is masked whole; `flush` sends
 * what is left when the block ends.
 */
class ChunkStream {
  private pending = "";

  constructor(
    private readonly run: Run,
    private readonly blockId: string,
  ) {}

  emit(chunk: string): void {
    if (!this.run.onChunk || chunk === "") return;
    this.pending += chunk;
    const cut = this.run.safeStreamCut(this.pending);
    if (cut === 0) return;
    this.deliver(this.pending.slice(0, cut));
    this.pending = this.pending.slice(cut);
  }

  flush(): void {
    if (this.pending === "") return;
    this.deliver(this.pending);
    this.pending = "";
  }

  private deliver(text: string): void {
    try {
      this.run.onChunk?.(this.blockId, this.run.redactor.redactText(text));
    } catch {
      // A listener's failure must not change the run it listens to.
    }
  }
}

/** The run's own time limit as an error: the one its timer raised, or a new one. */
export function runTimeout(run: Run): WorkflowError {
  const reason = run.cancellation.reason;
  return reason instanceof WorkflowError && reason.code === "RUN_TIMEOUT" ? reason : new WorkflowError("RUN_TIMEOUT", "the run ran past its time limit");
}

/**
 * Calls the handler. A synchronous handler returns its output directly (no promise, no timer, no
 * AbortController), which keeps simple blocks cheap; an asynchronous one races its own timeout.
 */
function runHandler(run: Run, node: CompiledNode, frame: Frame, input: unknown, cancellation: Cancellation, chunks: ChunkStream, usage: ModelUsage[]): BlockOutput | Promise<BlockOutput> {
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
    timeoutMs,
    runDeadline: run.deadline,
    account: run.account,
    services: run.services,
    variables: run.variables,
    trigger: node === run.triggerNode ? run.trigger : null,
    targetsOf: (handle) => node.targets.get(handle) ?? [],
    emitChunk: (chunk) => chunks.emit(chunk),
    traceHeaders: () => (run.trace ? traceHeaders(run.trace.traceId, blockSpanId(run.trace.spanId, `${node.id}${frame.key}`), run.trace.traceState) : {}),
    recordModelUsage: (reported) => {
      run.modelUsage.push({ ...reported });
      usage.push({ ...reported });
    },
    durable: (run.replay?.durability.parkAfterMs ?? null) !== null,
    pause: (ms) => pauseBlock(run, instanceKey(node, frame), ms, controllerOf().signal),
    awaitApproval: (request) => awaitApproval(run, instanceKey(node, frame), node.identity, request),
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
    // the run's time limit as this block's). A handler that stops at its deadline itself needs none.
    const timer = ownDeadline < run.deadline && !handler.stopsAtDeadline
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

/**
 * A block instance that completed in an earlier attempt of a durable run: its recorded outcome, with
 * what completing it did to the run (budgets, model usage, masked credentials, its span) done again.
 */
function replayNode(run: Run, node: CompiledNode, frame: Frame, recorded: CompletedCheckpoint): Outcome {
  run.blocksExecuted++;
  try {
    const secrets = run.handlers[node.type as HandledBlockType].secretsOf?.(node.config.resolve(tokensOf(run, frame)));
    if (secrets?.length) run.addSecrets(secrets);
  } catch {
    // The config resolved when the block ran; if it no longer does, there is nothing more to mask.
  }
  if (!isTrigger(node)) chargeOutput(run, node, recorded.output);
  for (const usage of recorded.modelUsage) run.modelUsage.push(usage);
  frame.spans.push(recorded.span);
  notify(run, recorded.span);
  return { output: recorded.output, failed: recorded.failed };
}

/**
 * Executes `node` in `frame`. Resolves with its outcome (a handled failure included); rejects with
 * a BlockError when it fails without an `error` edge, or with the cancellation's reason when the
 * scope was cancelled while it ran. `runScope` runs container bodies. In a durable run a block
 * completed in an earlier attempt is replayed, and a block that completes now is checkpointed
 * before its outcome is returned, so its successors start only once it is recorded (durable.ts).
 */
export async function executeNode(run: Run, node: CompiledNode, frame: Frame, cancellation: Cancellation, runScope: ScopeRunner): Promise<Outcome> {
  if (run.replay === null || node.subflow) return runNode(run, node, frame, cancellation, runScope, []);
  const key = instanceKey(node, frame);
  const recorded = run.replay.completedOf(key);
  if (recorded) return replayNode(run, node, frame, recorded);
  const usage: ModelUsage[] = [];
  const outcome = await runNode(run, node, frame, cancellation, runScope, usage);
  await recordCompletion(run, key, outcome.output, outcome.failed, outcome.span, usage);
  return outcome;
}

/** Runs the block itself; its outcome carries its span, which a durable run records. */
async function runNode(run: Run, node: CompiledNode, frame: Frame, cancellation: Cancellation, runScope: ScopeRunner, usage: ModelUsage[]): Promise<Outcome & { span: TraceSpan }> {
  const startedAt = Date.now();
  const started = performance.now();
  const span = openBlockSpan(node, frame, startedAt);
  const chunks = new ChunkStream(run, node.id);
  run.blocksExecuted++;
  try {
    const input = node.config.resolve(tokensOf(run, frame));
    const secrets = node.subflow ? undefined : run.handlers[node.type as HandledBlockType].secretsOf?.(input);
    if (secrets?.length) run.addSecrets(secrets);
    // The trace shows code as the user wrote it, not the sandbox's rewritten source.
    span.input = node.config.hasCode ? node.config.traced(input) : input;
    const output = node.subflow ? await runContainer(run, node, frame, input, cancellation, span, runScope) : await runHandler(run, node, frame, input, cancellation, chunks, usage);
    chunks.flush();
    // A trigger's output is the request, which the body cap bounds; every other output is charged.
    if (!isTrigger(node)) chargeOutput(run, node, output);
    span.output = output;
    closeSpan(span, startedAt, started);
    notify(run, span);
    return { output, failed: false, span };
  } catch (caught) {
    chunks.flush();
    closeSpan(span, startedAt, started);
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
    const output: BlockOutput = { ...error.output, error: error.message, code: error.code };
    if (error.output) span.output = output;
    if (node.hasErrorEdge) {
      span.errorHandled = true;
      span.output = output;
      notify(run, span);
      return { output, failed: true, span };
    }
    notify(run, span);
    throw error;
  }
}
