/**
 * Where the executor meets the block handlers: every caller that runs a workflow (the execute and
 * manual-run endpoints, the stream, the async worker) comes through here, so the executor and the
 * spec registry never import a handler and the handler registry is wired in once.
 */
import { BLOCK_HANDLERS } from "../blocks/handlers.ts";
import type { HandledBlockType } from "../blocks/specs.ts";
import type { BlockHandler } from "../core/block-handler.ts";
import type { ExecutionResult } from "../core/context.ts";
import { executeWorkflow, type ExecuteOptions } from "../executor/execute.ts";

/** What runWorkflow needs: the executor's options, with the handlers optional. */
export interface RunWorkflowOptions extends Omit<ExecuteOptions, "handlers"> {
  /** Replaces the registry's handlers for some types (tests use it to observe scheduling). */
  handlers?: Partial<Record<HandledBlockType, BlockHandler<unknown>>>;
}

/** Runs a workflow from a trigger with every block type's handler (executor/execute.ts says how). */
export function runWorkflow(options: RunWorkflowOptions): Promise<ExecutionResult> {
  return executeWorkflow({ ...options, handlers: { ...BLOCK_HANDLERS, ...options.handlers } });
}
