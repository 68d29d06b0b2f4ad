import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import { Hono } from "hono";
import { html } from "hono/html";
import { act, formFields, invalid } from "../actions.ts";
import { DashboardError } from "../errors.ts";
import { layout, type Markup } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";
import { checkId, rpc } from "../workflows/stack-rpc.ts";

/** Longest subscription URL (docs/webhooks.md). */
export const URL_CHARACTERS = 2048;
/** Dead letters listed on a workflow's page, newest first. */
export const DEAD_LETTERS_SHOWN = 20;

interface Subscription {
  id: string;
  workflow_id: string;
  url: string;
  active: boolean;
  has_secret: boolean;
  level_filter: string[];
  trigger_filter: string[];
  disabled_reason: string | null;
}

/** A signing secret the dashboard makes: 32 random bytes in hex, inside the 8–256 the table takes. */
function newSecret(): string {
  return randomBytes(32).toString("hex");
}

async function subscriptionOf(stack: StackClient, id: string): Promise<Subscription> {
  const [subscription] = await stack.json<Subscription[]>(`/rest/v1/webhook_subscriptions?select=id,workflow_id,url,active,has_secret,level_filter,trigger_filter,disabled_reason&id=eq.${id}`);
  if (!subscription) throw new DashboardError(404, `There is no webhook subscription ${id}`);
  return subscription;
}

/** The one page that shows a signing secret: the answer to the form that set it, never a later one. */
function secretPage(c: Context, subscription: Subscription, secret: string, what: string): Response | Promise<Response> {
  const content = html`<section class="notice" aria-label="New signing secret"><p>${what} Deliveries to ${subscription.url} are signed with this secret; it is shown this once (stored encrypted, never readable again): copy it to the receiver now.</p>
<p><code class="signing-secret">${secret}</code></p></section>
<p><a href="/workflows/${subscription.workflow_id}#subscriptions">Back to the workflow</a></p>`;
  return c.html(layout("Signing secret", "Workflows", {}, content), 201);
}

/**
 * A workflow's webhook subscriptions on its page: each with pause/resume, a new secret and a
 * replay of its dead letters, the form that adds one, and the dead letters themselves
 * (failed deliveries, with what the receiver said).
 */
export async function subscriptionsSection(stack: StackClient, workflowId: string): Promise<Markup> {
  const [subscriptions, dead] = await Promise.all([
    stack.json<Subscription[]>(`/rest/v1/webhook_subscriptions?select=id,workflow_id,url,active,has_secret,level_filter,trigger_filter,disabled_reason&workflow_id=eq.${workflowId}&order=created_at`),
    stack.json<{ id: string; subscription_id: string; execution_id: string; failed_at: string | null; last_status_code: number | null; last_error: string | null; last_response_excerpt: string | null }[]>(
      `/rest/v1/webhook_deliveries?select=id,subscription_id,execution_id,failed_at,last_status_code,last_error,last_response_excerpt&workflow_id=eq.${workflowId}&status=eq.failed&order=failed_at.desc&limit=${DEAD_LETTERS_SHOWN}`,
    ),
  ]);
  const base = "/workflows/subscriptions";
  return html`<h2 id="subscriptions">Webhook subscriptions</h2>
<form method="post" action="/workflows/${workflowId}/subscriptions" class="inline" aria-label="Add a webhook subscription">
<label>Receiver URL <input type="url" name="url" required maxlength="${URL_CHARACTERS}" placeholder="https://example.com/hook"></label><button type="submit">Add subscription</button>
</form>
${subscriptions.length === 0 ? html`<p>No subscriptions.</p>` : html`<table class="subscriptions"><thead><tr><th>URL</th><th>Active</th><th>Signed</th><th>Levels</th><th>Triggers</th><th></th></tr></thead><tbody>
${subscriptions.map((subscription) => html`<tr data-subscription-id="${subscription.id}"><td>${subscription.url}</td><td class="subscription-active">${subscription.active ? "yes" : `no${subscription.disabled_reason ? ` (${subscription.disabled_reason})` : ""}`}</td><td>${subscription.has_secret ? "yes" : "no"}</td><td>${subscription.level_filter.join(", ")}</td><td>${subscription.trigger_filter.join(", ")}</td>
<td><form method="post" action="${base}/${subscription.id}/active"><input type="hidden" name="active" value="${subscription.active ? "no" : "yes"}"><button type="submit">${subscription.active ? "Pause" : "Resume"}</button></form>
<form method="post" action="${base}/${subscription.id}/rotate"><button type="submit">New secret</button></form>
<form method="post" action="${base}/${subscription.id}/replay"><button type="submit">Redeliver dead letters</button></form></td></tr>`)}
</tbody></table>`}
<h3>Dead letters</h3>
${dead.length === 0 ? html`<p>No dead letters.</p>` : html`<table class="dead-letters"><thead><tr><th>Died</th><th>Run</th><th>Last answer</th><th>What the receiver said</th></tr></thead><tbody>
${dead.map((letter) => html`<tr data-dead-letter-id="${letter.id}"><td>${letter.failed_at ?? ""}</td><td><a href="/workflows/runs/${letter.execution_id}">run</a></td><td>${letter.last_status_code ?? ""} ${letter.last_error ?? ""}</td><td><code>${letter.last_response_excerpt ?? ""}</code></td></tr>`)}
</tbody></table>`}`;
}

/**
 * Managing webhook subscriptions through the data API (public.webhook_subscriptions, whose secret
 * is write-only) and redeliver_failed_webhooks: add one with a secret the dashboard makes, pause
 * and resume, a new secret, and replaying the dead letters.
 */
export function subscriptionPages(stack: StackClient): Hono {
  const pages = new Hono();

  pages.post("/:id/subscriptions", async (c) => {
    const workflowId = checkId(c.req.param("id"), "workflow");
    const url = ((await formFields(c)).url ?? "").trim();
    const secret = newSecret();
    let created: Subscription | null = null;
    const response = await act(c, `/workflows/${workflowId}#subscriptions`, async () => {
      if (!/^https?:\/\/\S+$/.test(url)) throw invalid("The receiver's URL is an absolute http or https address without spaces");
      if (url.length > URL_CHARACTERS) throw invalid(`A receiver's URL has at most ${URL_CHARACTERS} characters`);
      [created] = await stack.json<Subscription[]>("/rest/v1/webhook_subscriptions?select=id,workflow_id,url,active,has_secret,level_filter,trigger_filter,disabled_reason", {
        method: "POST",
        headers: { prefer: "return=representation" },
        json: { workflow_id: workflowId, url, secret },
      });
      return "";
    });
    return created ? await secretPage(c, created, secret, "Added the subscription.") : response;
  });

  pages.post("/subscriptions/:id/active", async (c) => {
    const subscription = await subscriptionOf(stack, checkId(c.req.param("id"), "webhook subscription"));
    const active = (await formFields(c)).active === "yes";
    return await act(c, `/workflows/${subscription.workflow_id}#subscriptions`, async () => {
      await stack.json(`/rest/v1/webhook_subscriptions?id=eq.${subscription.id}`, { method: "PATCH", json: { active } });
      return active ? `Resumed deliveries to ${subscription.url}` : `Paused deliveries to ${subscription.url}`;
    });
  });

  pages.post("/subscriptions/:id/rotate", async (c) => {
    const subscription = await subscriptionOf(stack, checkId(c.req.param("id"), "webhook subscription"));
    const secret = newSecret();
    await stack.json(`/rest/v1/webhook_subscriptions?id=eq.${subscription.id}`, { method: "PATCH", json: { secret } });
    return await secretPage(c, subscription, secret, "The old secret no longer signs deliveries.");
  });

  pages.post("/subscriptions/:id/replay", async (c) => {
    const subscription = await subscriptionOf(stack, checkId(c.req.param("id"), "webhook subscription"));
    return await act(c, `/workflows/${subscription.workflow_id}#subscriptions`, async () => {
      const replayed = await rpc<number>(stack, "redeliver_failed_webhooks", { p_subscription_id: subscription.id });
      return `Queued ${replayed} dead letter${replayed === 1 ? "" : "s"} again`;
    });
  });

  return pages;
}
