// The specs' /api/* surface (decisions.md, "Base URL"): a Hono app that mounts each service's
// routes. Served at /functions/v1/api/* and, locally, at the gateway's root /api/*; either way the
// path seen here starts with /api (hosted Supabase strips /functions/v1, as the local host does).
import { Hono } from "hono";
import { cors } from "hono/cors";
import { createGamificationApp } from "../_shared/gamification/http.ts";
import { PREFIX as GAMIFICATION } from "../_shared/gamification/routes.ts";
import { answerError } from "../_shared/http/routing.ts";
import { workflowErrors, workflowLog } from "../_shared/workflows/workflow-errors.ts";
import { createLogsApp, LOGS_PREFIX } from "../_shared/workflows/api/logs-endpoints.ts";
import { createWorkflowApp } from "../_shared/workflows/api/routes.ts";
import { createRunsApp, RUNS_PREFIX } from "../_shared/workflows/api/runs-endpoints.ts";

/** Answer headers a browser app reads: rate-limit state, retry hints, replays, where a job lives. */
const EXPOSED_HEADERS = ["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Idempotent-Replayed", "Location", "X-Request-Id"];

const app = new Hono({ strict: false });
// Browser apps call this API from their own origins with bearer tokens or API keys, never cookies,
// so any origin may. Hosted Supabase adds no CORS headers to a function's answers (the local
// gateway's would hide that), so the function answers preflights and tags answers itself.
app.use("*", cors({ origin: "*", exposeHeaders: EXPOSED_HEADERS, maxAge: 86_400 }));
app.route(GAMIFICATION, createGamificationApp());
// Before the workflow app, whose catch-all under /api answers 404 to paths it does not know.
app.route(LOGS_PREFIX, createLogsApp());
app.route(RUNS_PREFIX, createRunsApp());
app.route("/api", createWorkflowApp());
app.notFound((c) => workflowErrors.render(workflowErrors.describe({ kind: "not_found", method: c.req.method, path: new URL(c.req.url).pathname })));
app.onError((error, c) => answerError(error, c.req.raw, { errors: workflowErrors, logger: workflowLog }));

Deno.serve((request) => app.fetch(request));
