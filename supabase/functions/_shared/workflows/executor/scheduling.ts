/**
 * Scheduling of one scope (the top level, or one iteration of a body; decisions, "Executor
 * semantics"). A block starts as soon as every one of its incoming edges is settled and at least
 * one was followed. An edge is settled when its source finishes (followed or not, by the source's
 * outcome: success, error, the Condition's choice, the Router's route) or is skipped. A block
 * whose edges all settle unfollowed is skipped and settles its own edges unfollowed, so a branch a
 * Condition did not choose is deactivated all the way down, while a block joining two branches
 * still runs once its live inputs are done. Independent blocks are in flight at the same time; the
 * spec's "parallel layers" are what this produces.
 */
import { executeNode } from "./block-execution.ts";
import { Cancellation } from "./cancellation.ts";
import type { CompiledEdge, CompiledNode, CompiledScope, ScopePlan } from "./graph.ts";
import { recordOutcome, ResponseSent, type Frame, type Outcome, type Run } from "./run-state.ts";

/** Whether an edge is followed, given how its source ended. */
export function follows(rule: CompiledEdge["rule"], outcome: Outcome): boolean {
  if (outcome.failed) return rule.on === "error";
  switch (rule.on) {
    case "success":
      return true;
    case "error":
      return false;
    case "choice":
      return outcome.output[rule.field] === rule.id;
  }
}

/**
 * Runs one scope to completion. Resolves when every reachable block has run or been skipped;
 * rejects with the first failure (cancelling the blocks still in flight) or with the parent's
 * cancellation reason.
 */
export function runScope(run: Run, scope: CompiledScope, frame: Frame, plan: ScopePlan, parent: Cancellation): Promise<void> {
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
      // Cancelled between blocks (nothing in flight to fail): the blocks left were never started,
      // so the scope did not complete. A Response ends the run successfully and is no such case.
      else if (cancellation.aborted && !(cancellation.reason instanceof ResponseSent)) reject(cancellation.reason);
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
      recordOutcome(run, frame, node, outcome);
      for (const edge of node.outgoing) settle(edge.target, follows(edge.rule, outcome));
    };
    function start(node: CompiledNode): void {
      if (failure !== null || cancellation.aborted) return;
      if (!node.block.enabled) return skip(node);
      inFlight++;
      frame.status.set(node.id, "running");
      executeNode(run, node, frame, cancellation, runScope).then(
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
