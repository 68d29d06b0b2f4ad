import { loadConfig } from "../platform/config/stack-config.ts";
import { stopRecordedStack } from "../platform/commands/stack.ts";

/** `npm stop`: stops the stack `npm start` runs, from any terminal. */
export async function main(): Promise<number> {
  const stopped = await stopRecordedStack(loadConfig("dev"));
  console.log(stopped ? "Stopped the Orbita local stack." : "No Orbita local stack was running.");
  return 0;
}
