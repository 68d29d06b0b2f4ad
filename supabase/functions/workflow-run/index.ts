// Manual runs of a workflow's draft, as a function of its own: POST /functions/v1/workflow-run/{id}
// with the user's session (verify_jwt stays on). The same handler serves /api/workflows/{id}/run.
import { createRunFunctionApp } from "../_shared/workflows/api/routes.ts";

const app = createRunFunctionApp();
Deno.serve((request) => app.fetch(request));
