/**
 * A supervised stack in a process of its own, for tests that kill its services: what `npm start`
 * runs (startStack, then runUntilStopped until SIGTERM or SIGINT), on the test profile (with the
 * test fixtures) in the slot given as the first argument. Prints READY once everything is up.
 */
import { loadConfig } from "../../platform/config/stack-config.ts";
import { resetStack, runUntilStopped, startStack } from "../../platform/commands/stack.ts";

const config = loadConfig("test", Number(process.argv[2]));
await resetStack(config);
const stack = await startStack(config, { fixtures: true });
console.log("READY");
await runUntilStopped(stack);
process.exit(0);
