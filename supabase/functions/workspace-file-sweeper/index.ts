// The worker of the `workspace_file_sweeps` queue: removes a deleted workspace's run files from the
// `workflow-files` bucket through the Storage API (_shared/workflows/runs/workspace-file-sweep.ts).
// The queue poller (locally) or pg_cron + pg_net (hosted) POSTs {queue_name, batch_size,
// visibility_timeout} with the service-role key; every other caller is refused, since it deletes
// files with the service role.
import { serviceRpc } from "../_shared/db/service-rpc.ts";
import { createServiceRoleClient } from "../_shared/db/supabase-clients.ts";
import { readJson, validate } from "../_shared/http/body.ts";
import { resolveCaller } from "../_shared/http/caller.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { serveEndpoint } from "../_shared/http/routing.ts";
import { workflowErrors as errors, workflowLog } from "../_shared/workflows/workflow-errors.ts";
import { FILES_BUCKET } from "../_shared/workflows/runs/storage-files.ts";
import { drainFileSweeps, fileSweepRequestSchema } from "../_shared/workflows/runs/workspace-file-sweep.ts";

const log = workflowLog.with({ component: "workspace-file-sweeper" });

Deno.serve(serveEndpoint({
  methods: ["POST"],
  errors,
  logger: workflowLog,
  async handle(request) {
    const caller = await resolveCaller(request, { errors });
    if (caller.kind !== "service" || !caller.verified) throw new HttpError(403, "FORBIDDEN", "The file sweeper is invoked with the service-role key");
    const body = validate(fileSweepRequestSchema, await readJson(request, { errors, maxBytes: 4096, contentType: null }), "body", errors);
    const bucket = createServiceRoleClient().storage.from(FILES_BUCKET);
    const summary = await drainFileSweeps({
      rpc: serviceRpc,
      async remove(names) {
        const { error } = await bucket.remove(names);
        if (error) throw new Error(`removing ${names.length} files failed: ${error.message}`);
      },
      log: (event, fields) => log.error(event, fields),
    }, { batchSize: body.batch_size, visibilitySeconds: body.visibility_timeout });
    if (summary.removed > 0 || summary.failed > 0) log.info("workspace_files_swept", { ...summary });
    return Response.json(summary);
  },
}));
