import { join } from "node:path";
import { PROJECT_ROOT, type StackConfig } from "../config/stack-config.ts";
import { processService } from "../process/children.ts";
import { waitForPort } from "../process/ports.ts";
import type { ServiceDefinition } from "../process/supervisor.ts";

/**
 * The local dashboard (platform/dashboard/server.ts) under Node with tsx's loader in-process, on
 * 127.0.0.1 at `ports.studio`, where `supabase start` serves Studio.
 */
export function dashboardService(config: StackConfig): ServiceDefinition {
  return processService(config, {
    name: "dashboard",
    command: process.execPath,
    args: ["--import", join(PROJECT_ROOT, "node_modules", "tsx", "dist", "loader.mjs"), join(PROJECT_ROOT, "platform", "dashboard", "server.ts")],
    ready: () => waitForPort(config.ports.studio, "The dashboard"),
  });
}
