/**
 * The async worker's ApprovalDesk (core/approvals.ts): an approval block instance's approval lives in
 * the database (open_workflow_approval, …032700_workflows-approvals.sql), where the approvers' links,
 * the resume API and the timeout decide it. A refused request (no approver, a quorum above their
 * number) fails the block; an attempt that no longer holds the run stops, as a refused checkpoint does.
 */
import { z } from "zod";
import type { ApprovalDesk, ApprovalOutcome, ApprovalState } from "../core/approvals.ts";
import { WorkflowError } from "../core/errors.ts";
import type { ServiceCall } from "../../db/service-calls.ts";
import type { RunPayload } from "./lifecycle-answers.ts";

const openAnswer = z.union([
  z.object({ decided: z.literal(true), output: z.record(z.string(), z.unknown()) }),
  z.object({ decided: z.literal(false), expiresAt: z.string() }),
  z.object({ refused: z.string() }),
  z.object({ alive: z.literal(false) }),
]);

/** The desk of a claimed run; `onLost` is called when another attempt holds the run (durable-run.ts). */
export function approvalDeskOf(call: ServiceCall, run: RunPayload, onLost: () => void): ApprovalDesk {
  return {
    async open(key, block, request): Promise<ApprovalState> {
      const answer = openAnswer.parse(await call("open_workflow_approval", {
        p_execution_id: run.executionId, p_attempt: run.attempt, p_key: key, p_block: block, p_request: request,
      }));
      if ("refused" in answer) throw new WorkflowError("BLOCK_FAILED", answer.refused);
      if ("alive" in answer) {
        onLost();
        throw new WorkflowError("CANCELLED", "another attempt took the run over, or it ended");
      }
      return answer.decided ? { decided: true, output: answer.output as unknown as ApprovalOutcome } : answer;
    },
  };
}
