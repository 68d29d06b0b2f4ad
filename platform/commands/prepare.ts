import { step } from "../process/progress.ts";
import { BENCH_PACKAGES, installPackages, installPgmqExtension, missingPackages, reservePlatformPorts, RUNTIME_PACKAGES, TEST_PACKAGES } from "./setup.ts";

/**
 * Makes the machine able to run the stack: installs missing Debian packages (and, for the test
 * suite or the benches, their extra tools), the pgmq-compatible extension where the real pgmq is
 * absent, and a reservation of the platform's ports.
 */
export async function prepareMachine(purpose: "run" | "test" | "bench"): Promise<void> {
  const extra = { run: [], test: TEST_PACKAGES, bench: BENCH_PACKAGES }[purpose];
  const wanted = [...RUNTIME_PACKAGES, ...extra];
  const missing = missingPackages(wanted);
  if (missing.length > 0) await step(`Installing Debian packages: ${missing.join(", ")}`, async () => installPackages(missing));
  // Best effort: without root the ports stay unreserved, which only matters on a busy machine.
  reservePlatformPorts();
  const pgmq = installPgmqExtension();
  if (pgmq === "installed") console.log("  • Installed the pgmq-compatible extension into the local Postgres");
}
