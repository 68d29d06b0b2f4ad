import type { Context } from "hono";
import { DashboardError } from "./errors.ts";
import type { Flash } from "./layout.ts";

/** The fields of a submitted form, text only (files are read by the upload action itself). */
export async function formFields(c: Context): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  return Object.fromEntries(Object.entries(body).filter(([, value]) => typeof value === "string")) as Record<string, string>;
}

/** `path` with the outcome of an action in its query, for the page it goes back to. */
export function withFlash(path: string, flash: Flash): string {
  const url = new URL(path, "http://dashboard");
  if (flash.notice) url.searchParams.set("notice", flash.notice);
  if (flash.error) url.searchParams.set("error", flash.error);
  return `${url.pathname}${url.search}`;
}

/** The outcome of the last action, read back from the query. */
export function flashOf(c: Context): Flash {
  return { notice: c.req.query("notice"), error: c.req.query("error") };
}

/**
 * Runs a form's action and goes back to `back` (post/redirect/get) saying what happened: the
 * action's notice (on `next`, when the action leaves `back` without its subject), or the
 * validation or server error in words. Anything other than a DashboardError is a bug and is left
 * to the error page.
 */
export async function act(c: Context, back: string, action: () => Promise<string>, next = back): Promise<Response> {
  try {
    return c.redirect(withFlash(next, { notice: await action() }), 303);
  } catch (error) {
    if (error instanceof DashboardError) return c.redirect(withFlash(back, { error: error.message }), 303);
    throw error;
  }
}

/** A validation failure: nothing was sent to the stack. */
export function invalid(message: string): DashboardError {
  return new DashboardError(400, message);
}
