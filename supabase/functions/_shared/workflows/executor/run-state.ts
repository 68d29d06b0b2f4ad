/**
 * What one run holds while it executes: the state shared by every scope (variables, routing
 * decisions, loop and parallel progress, the active path, the Response), and one frame per scope
 * run (the top level, or one iteration of a body) with that scope's block statuses and outputs.
 * Scheduling decides when a block runs; this module records what it produced, and turns the
 * top-level frame into the execution context a result reports.
 */
import type { BlockHandlers } from "../core/block-handler.ts";
import { BLOCK_SPECS, type HandledBlockType } from "../blocks/specs.ts";
import { Cancellation } from "./cancellation.ts";
import type { BlockOutput, ExecutionSnapshot, ExecutorServices, TraceSpan, TriggerRequest } from "../core/context.ts";
import type { ModelUsage } from "../outbound/model-cost.ts";
import type { Replay } from "./replay.ts";
import type { CompiledNode, CompiledScope, CompiledWorkflow, ScopePlan } from "./graph.ts";
import { inputTexts, secretRedactor, type Redactor } from "./redaction.ts";
import type { TokenSource } from "../core/resolver.ts";
import type { RunTrace } from "../tracing/trace-context.ts";

/** Where the context reports each choosing block type's decisions: one entry per group, even when none ran. */
const DECISION_GROUPS = [...new Set(BLOCK_SPECS.flatMap((spec) => ("choice" in spec && spec.choice ? [spec.choice.decisionGroup ?? spec.type] : [])))];

/** Marks the root scope's abort when a Response block has answered: the run is over, successfully. */
export class ResponseSent {
  readonly reason = "response sent";
}

/** Where a block instance stands in its frame. */
export type NodeStatus = "running" | "success" | "error" | "skipped";

/** One iteration of a loop or one branch of a parallel, as `<loop.*>` / `<parallel.*>` read it. */
export interface Iteration {
  container: CompiledNode;
  kind: "loop" | "parallel";
  index: number;
  item: unknown;
  /** The collection, or null for `for` loops and `count` parallels. */
  items: unknown[] | null;
}

/** Outputs and states of one scope run: the top level, or one iteration of a body. */
export interface Frame {
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
  /** This frame's reference answers, made on first use (see run-references.ts). */
  tokens: TokenSource | null;
}

/** How one block instance ended: its output, and whether it failed (an `error` edge took over). */
export interface Outcome {
  output: BlockOutput;
  failed: boolean;
}

/** Runs one scope to completion; scheduling.ts provides it, containers call it for each iteration. */
export type ScopeRunner = (run: Run, scope: CompiledScope, frame: Frame, plan: ScopePlan, parent: Cancellation) => Promise<void>;

/** Where a run reports what leaves it: finished block spans, already redacted. */
export type SpanObserver = (span: TraceSpan) => void;

/** Where a run reports text a block streams while it runs (already redacted), by the block's id. */
export type ChunkObserver = (blockId: string, chunk: string) => void;

/** State shared by every scope of one run. */
export class Run {
  readonly variables = new Map<string, unknown>();
  readonly decisions: ExecutionSnapshot["decisions"] = Object.fromEntries(DECISION_GROUPS.map((group) => [group, {}]));
  readonly subflows: ExecutionSnapshot["subflows"] = {};
  readonly activePath: string[] = [];
  /** The root of the cancellation tree: run timeout, the caller's signal and a Response abort it. */
  readonly cancellation = new Cancellation();
  /**
   * Masks secrets in whatever leaves the run (its result, the spans and chunks it reports): the
   * environment's values, and credentials blocks were configured with (addSecrets).
   */
  redactor: Redactor;
  /** Every model call's usage, in the order reported. */
  readonly modelUsage: ModelUsage[] = [];
  blocksExecuted = 0;
  /** Iterations and branches charged so far (budgets.ts). */
  iterationsUsed = 0;
  /** JSON characters of the block outputs charged so far (budgets.ts). */
  outputChars = 0;
  /** Sizes of outputs measured already, so a loop's results are not measured twice (json-size.ts). */
  readonly sizes = new WeakMap<object, number>();
  response: BlockOutput | null = null;
  /** An async run's history and checkpoint recorder (replay.ts, durable.ts); null for synchronous runs. */
  replay: Replay | null = null;
  /** The billing account the run is charged to: the sandbox shares its threads fairly between accounts. */
  account: string | null = null;
  /** The run's trace ids, for the `traceparent` of its outbound calls (tracing/trace-context.ts); null when none were given. */
  trace: RunTrace | null = null;
  private readonly secrets: Set<string>;
  /** Streams need no holding back when no secret is longer than one character. */
  private longestSecret = 0;
  /** The input's texts, whose echoes are never masked (redaction.ts explains why). */
  private readonly echoes: string[];
  /**
   * Echoes holding a secret, which a stream sends whole (held back like a secret) so that the
   * echo's span is seen in one piece and left as typed. Bounded in length: holding back is
   * quadratic in it, and the sender chooses the input.
   */
  private heldEchoes: string[] = [];

  constructor(
    readonly workflow: CompiledWorkflow,
    readonly executionId: string,
    readonly trigger: TriggerRequest,
    readonly triggerNode: CompiledNode,
    readonly env: Readonly<Record<string, string>>,
    readonly services: ExecutorServices,
    readonly handlers: BlockHandlers<HandledBlockType>,
    readonly deadline: number,
    readonly onBlockComplete: SpanObserver | undefined,
    readonly onChunk: ChunkObserver | undefined = undefined,
  ) {
    this.secrets = new Set(Object.values(env));
    this.echoes = inputTexts(trigger.input);
    this.redactor = secretRedactor(this.secrets, { echoes: this.echoes });
    for (const value of this.secrets) this.longestSecret = Math.max(this.longestSecret, value.length);
    this.holdEchoes();
  }

  /** Recomputes which echoes a stream holds back: those holding a secret, up to MAX_HELD_ECHO characters. */
  private holdEchoes(): void {
    const secrets = [...this.secrets].filter((secret) => secret.length > 0);
    this.heldEchoes = this.echoes.filter((echo) => echo.length <= MAX_HELD_ECHO && secrets.some((secret) => echo.includes(secret)));
  }

  /** Masks these values too from now on (and in the result); a no-op for values already known. */
  addSecrets(values: readonly string[]): void {
    const before = this.secrets.size;
    for (const value of values) {
      if (!value) continue;
      this.secrets.add(value);
      this.longestSecret = Math.max(this.longestSecret, value.length);
    }
    if (this.secrets.size !== before) {
      this.redactor = secretRedactor(this.secrets, { echoes: this.echoes });
      this.holdEchoes();
    }
  }

  /**
   * How much of a block's streamed text can go out now: all of it but a tail that may be the start
   * of a secret (the next chunk may complete it), and never through the middle of a secret already
   * there. Text without such a tail goes out as it came.
   */
  safeStreamCut(text: string): number {
    if (this.longestSecret <= 1) return text.length;
    const withheld = this.heldEchoes.length === 0 ? this.secrets : [...this.secrets, ...this.heldEchoes];
    let held = 0;
    for (const secret of withheld) {
      for (let length = Math.min(secret.length - 1, text.length); length > held; length--) {
        if (text.endsWith(secret.slice(0, length))) {
          held = length;
          break;
        }
      }
    }
    let cut = text.length - held;
    for (const secret of withheld) {
      for (let at = text.indexOf(secret); at >= 0 && at < cut; at = text.indexOf(secret, at + 1)) {
        if (at + secret.length > cut) {
          cut = at;
          break;
        }
      }
    }
    return cut;
  }
}

/** The longest input echo a stream holds back to send whole (see Run.heldEchoes). */
export const MAX_HELD_ECHO = 2000;

/** A frame for the top level (no parent) or for one iteration of a container's body. */
export function newFrame(parent: Frame | null, scopeId: string | null, iteration: Iteration | null): Frame {
  const key = iteration ? `${parent?.key ?? ""}[${iteration.container.id}:${iteration.index}]` : "";
  return { parent, scopeId, iteration, key, status: new Map(), outputs: new Map(), spans: [], final: null, last: null, tokens: null };
}

/**
 * Records a finished block instance: its status and output in its frame, the frame's result, the
 * active path (top level), the Condition's or Router's decision, and a Response, which ends the run.
 */
export function recordOutcome(run: Run, frame: Frame, node: CompiledNode, outcome: Outcome): void {
  frame.status.set(node.id, outcome.failed ? "error" : "success");
  frame.outputs.set(node.id, outcome.output);
  if (node.isSink) frame.final = outcome.output;
  frame.last = outcome.output;
  if (frame.parent === null) run.activePath.push(node.id);
  if (outcome.failed) return;
  if (node.choice) run.decisions[node.choice.decisionGroup ?? node.type][`${node.id}${frame.key}`] = (outcome.output[node.choice.outputField] as string | null) ?? null;
  else if (node.type === "response") {
    run.response = outcome.output;
    run.cancellation.abort(new ResponseSent());
  }
}

/** The execution context at the end of a run: top-level block states, decisions, progress, variables. */
export function snapshotOf(run: Run, root: Frame): ExecutionSnapshot {
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
