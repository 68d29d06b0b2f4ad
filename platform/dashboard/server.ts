import { serve } from "@hono/node-server";
import { loadConfig } from "../config/stack-config.ts";
import { createDashboard } from "./app.ts";

/**
 * The dashboard process. It binds to 127.0.0.1 only: it acts with the service_role key, so it is
 * for the developer at this machine, never for the network.
 */
function main(): void {
  const config = loadConfig();
  const server = serve({ hostname: "127.0.0.1", port: config.ports.studio, fetch: createDashboard(config).fetch });
  const shutdown = () => server.close(() => process.exit(0));
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

main();
