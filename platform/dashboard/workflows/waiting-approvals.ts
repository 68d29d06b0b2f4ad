import { html } from "hono/html";
import type { Markup } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";

/** A waiting approval as waiting_workflow_approvals lists it. */
interface WaitingApproval {
  workflowId: string;
  workflowName: string;
  runId: string;
  blockId: string;
  blockName: string;
  waitingSince: string;
  expiresAt: string;
  quorum: number;
  approvers: number;
  approvals: number;
}

/**
 * The approvals waiting for people, oldest first (workflow, run, block, since when, until when, how
 * many approved of the quorum), from waiting_workflow_approvals. Links are never shown: the
 * database keeps only their tokens' digests.
 */
export async function waitingApprovalsSection(stack: StackClient): Promise<Markup> {
  const waiting = await stack.json<WaitingApproval[]>("/rest/v1/rpc/waiting_workflow_approvals", { method: "POST", json: {} });
  return html`<section aria-labelledby="waiting-approvals"><h2 id="waiting-approvals">Waiting approvals</h2>
${waiting.length === 0 ? html`<p>No run waits for an approval.</p>` : html`<table class="approvals"><thead><tr><th>Workflow</th><th>Run</th><th>Block</th><th>Approved</th><th>Waiting since</th><th>Expires</th></tr></thead><tbody>
${waiting.map((approval) => html`<tr><td><a href="/workflows/${approval.workflowId}">${approval.workflowName}</a></td><td><a href="/workflows/runs/${approval.runId}">${approval.runId}</a></td><td>${approval.blockName}</td><td>${approval.approvals} of ${approval.quorum} (${approval.approvers} asked)</td><td>${approval.waitingSince}</td><td>${approval.expiresAt}</td></tr>`)}
</tbody></table>`}</section>`;
}
