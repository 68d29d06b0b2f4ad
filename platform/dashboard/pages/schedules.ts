import { Hono } from "hono";
import { html } from "hono/html";
import { act } from "../actions.ts";
import { DashboardError } from "../errors.ts";
import type { Markup } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";
import { checkId, rpc } from "../workflows/stack-rpc.ts";

/** Occurrences listed ahead of each schedule (preview_schedule takes 1 to 100). */
export const OCCURRENCES_SHOWN = 5;

interface Schedule {
  id: string;
  workflow_id: string;
  block_name: string;
  cron_expression: string;
  timezone: string;
  status: string;
  paused_reason: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  last_execution_id: string | null;
  consecutive_failures: number;
}

/**
 * A workflow's schedules with their next occurrences (preview_schedule, from now, in the
 * schedule's time zone) and, for a paused one, why and a Resume. There is no pause: the public
 * API has none (a schedule pauses itself after its failures; undeploying stops it).
 */
export async function schedulesSection(stack: StackClient, workflowId: string): Promise<Markup> {
  const schedules = await stack.json<Schedule[]>(`/rest/v1/workflow_schedules?select=*&workflow_id=eq.${workflowId}&order=block_name`);
  const upcoming = await Promise.all(schedules.map((schedule) =>
    rpc<string[]>(stack, "preview_schedule", { p_cron_expression: schedule.cron_expression, p_timezone: schedule.timezone, p_count: OCCURRENCES_SHOWN }).catch((error) => {
      if (error instanceof DashboardError) return [] as string[];
      throw error;
    })));
  return html`<h2>Schedules</h2>
${schedules.length === 0 ? html`<p>No schedules.</p>` : html`<table class="schedules"><thead><tr><th>Block</th><th>Cron</th><th>Status</th><th>Next run</th><th>Last run</th><th>Failures in a row</th><th>Next ${OCCURRENCES_SHOWN} occurrences</th><th></th></tr></thead><tbody>
${schedules.map((schedule, index) => html`<tr data-schedule-id="${schedule.id}"><td>${schedule.block_name}</td><td><code>${schedule.cron_expression}</code> ${schedule.timezone}</td><td>${schedule.status}</td><td>${schedule.next_run_at ?? ""}</td><td>${schedule.last_execution_id ? html`<a href="/workflows/runs/${schedule.last_execution_id}">${schedule.last_run_at}</a>` : schedule.last_run_at ?? "never"}</td><td>${schedule.consecutive_failures}</td>
<td><ol class="occurrences">${upcoming[index].map((at) => html`<li>${at}</li>`)}</ol></td>
<td>${schedule.status === "paused" ? html`<small>${schedule.paused_reason ?? ""}</small><form method="post" action="/workflows/schedules/${schedule.id}/resume"><button type="submit">Resume</button></form>` : ""}</td></tr>`)}
</tbody></table>`}`;
}

/** Resuming a paused schedule (resume_workflow_schedule: active again from the first slot after now). */
export function schedulePages(stack: StackClient): Hono {
  const pages = new Hono();
  pages.post("/schedules/:id/resume", async (c) => {
    const id = checkId(c.req.param("id"), "schedule");
    const [schedule] = await stack.json<{ workflow_id: string; block_name: string }[]>(`/rest/v1/workflow_schedules?select=workflow_id,block_name&id=eq.${id}`);
    if (!schedule) throw new DashboardError(404, `There is no schedule ${id}`);
    return await act(c, `/workflows/${schedule.workflow_id}`, async () => {
      await rpc(stack, "resume_workflow_schedule", { p_schedule_id: id });
      return `Resumed the schedule ${schedule.block_name}`;
    });
  });
  return pages;
}
