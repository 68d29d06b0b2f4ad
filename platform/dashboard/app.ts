import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Hono } from "hono";
import { html } from "hono/html";
import { PROJECT_ROOT, type StackConfig } from "../config/stack-config.ts";
import { DashboardError } from "./errors.ts";
import { layout } from "./layout.ts";
import { localGuard } from "./local-guard.ts";
import { authPages } from "./pages/auth.ts";
import { gamificationPages } from "./pages/gamification.ts";
import { mailPages } from "./pages/mail.ts";
import { sqlPages } from "./pages/sql.ts";
import { storagePages } from "./pages/storage.ts";
import { tablePages } from "./pages/tables.ts";
import { workflowPages } from "./pages/workflows.ts";
import { StackClient } from "./stack-client.ts";

const PICO_CSS = readFileSync(join(PROJECT_ROOT, "node_modules", "@picocss", "pico", "css", "pico.min.css"), "utf8");
/** The dashboard's icon: an orbit around a dot, in the notice's amber. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><ellipse cx="16" cy="16" rx="14" ry="7" fill="none" stroke="#b7791f" stroke-width="3" transform="rotate(-30 16 16)"/><circle cx="16" cy="16" r="5" fill="#1565c0"/></svg>`;
const DASHBOARD_CSS = readFileSync(join(PROJECT_ROOT, "platform", "dashboard", "dashboard.css"), "utf8");

/**
 * The local dashboard: Studio's place under `supabase start`, for the local platform only. Pages
 * are rendered on the server from what the gateway's public routes answer to the service_role key;
 * forms post back and redirect, so the pages need no script.
 */
export function createDashboard(config: StackConfig): Hono {
  const stack = new StackClient(config);
  const app = new Hono();
  app.use(localGuard(config.ports.studio));
  app.get("/assets/pico.css", (c) => c.body(PICO_CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "max-age=3600" }));
  app.get("/assets/dashboard.css", (c) => c.body(DASHBOARD_CSS, 200, { "content-type": "text/css; charset=utf-8" }));
  // Browsers ask for /favicon.ico on every page; an SVG answers it, so no page logs a 404.
  app.get("/favicon.ico", (c) => c.body(FAVICON, 200, { "content-type": "image/svg+xml", "cache-control": "max-age=86400" }));
  app.get("/", (c) => c.redirect("/tables"));
  app.route("/tables", tablePages(stack));
  app.route("/sql", sqlPages(stack));
  app.route("/auth", authPages(stack));
  app.route("/storage", storagePages(stack, config.apiUrl));
  app.route("/mail", mailPages(config));
  app.route("/workflows", workflowPages(stack));
  app.route("/gamification", gamificationPages(stack));
  app.notFound((c) => c.html(layout("Not found", "", {}, html`<p>There is no such page.</p>`), 404));
  app.onError((error, c) => {
    const status = error instanceof DashboardError ? error.status : 500;
    const message = error instanceof DashboardError ? error.message : `The dashboard failed: ${error.message}`;
    return c.html(layout("Something went wrong", "", { error: message }, html`<p><a href="/">Back to the dashboard</a></p>`), status >= 400 && status < 600 ? (status as 400) : 500);
  });
  return app;
}
