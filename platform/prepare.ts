import { step } from "./process/progress.ts";
import { installPackages, installPgmqExtension, missingPackages, RUNTIME_PACKAGES, TEST_PACKAGES } from "./setup.ts";

/**
 * Makes the machine able to run the stack: installs missing Debian packages (and, for the test
 * suite, its extra tools) and the pgmq-compatible extension where the real pgmq is absent.
 */
export async function prepareMachine(purpose: "run" | "test"): Promise<void> {
  const wanted = purpose === "test" ? [...RUNTIME_PACKAGES, ...TEST_PACKAGES] : RUNTIME_PACKAGES;
  const missing = missingPackages(wanted);
  if (missing.length > 0) await step(`Installing Debian packages: ${missing.join(", ")}`, async () => installPackages(missing));
  const pgmq = installPgmqExtension();
  if (pgmq === "installed") console.log("  • Installed the pgmq-compatible extension into the local Postgres");
}
