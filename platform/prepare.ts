import { step } from "./process/progress.ts";
import { installPackages, installPgmqExtension, missingPackages, reservePlatformPorts, RUNTIME_PACKAGES, TEST_PACKAGES } from "./setup.ts";

/**
 * Makes the machine able to run the stack: installs missing Debian packages (and, for the test
 * suite, its extra tools), the pgmq-compatible extension where the real pgmq is absent, and a
 * reservation of the platform's ports.
 */
export async function prepareMachine(purpose: "run" | "test"): Promise<void> {
  const wanted = purpose === "test" ? [...RUNTIME_PACKAGES, ...TEST_PACKAGES] : RUNTIME_PACKAGES;
  const missing = missingPackages(wanted);
  if (missing.length > 0) await step(`Installing Debian packages: ${missing.join(", ")}`, async () => installPackages(missing));
  // Best effort: without root the ports stay unreserved, which only matters on a busy machine.
  reservePlatformPorts();
  const pgmq = installPgmqExtension();
  if (pgmq === "installed") console.log("  • Installed the pgmq-compatible extension into the local Postgres");
}
