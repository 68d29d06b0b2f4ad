// The specs' /api/* surface (decisions.md, "Base URL"): a Hono app that mounts each service's
// routes. Served at /functions/v1/api/* and, locally, at the gateway's root /api/*; either way the
// path seen here starts with /api (hosted Supabase strips /functions/v1, as the local host does).
import { Hono } from "hono";
import { createGamificationApp } from "../_shared/gamification/http.ts";
import { PREFIX as GAMIFICATION } from "../_shared/gamification/routes.ts";
import { answerError } from "../_shared/http/routing.ts";
import { workflowErrors, workflowLog } from "../_shared/http/workflow-errors.ts";
import { createLogsApp, LOGS_PREFIX } from "../_shared/workflows/api/logs-endpoints.ts";
import { createWorkflowApp } from "../_shared/workflows/api/routes.ts";

const app = new Hono({ strict: false });
app.route(GAMIFICATION, createGamificationApp());
// Before the workflow app, whose catch-all under /api answers 404 to paths it does not know.
app.route(LOGS_PREFIX, createLogsApp());
app.route("/api", createWorkflowApp());
app.notFound((c) => workflowErrors.render(workflowErrors.describe({ kind: "not_found", method: c.req.method, path: new URL(c.req.url).pathname })));
app.onError((error, c) => answerError(error, c.req.raw, { errors: workflowErrors, logger: workflowLog }));

Deno.serve((request) => app.fetch(request));
