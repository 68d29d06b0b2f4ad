/** The runnable examples in examples/workflows/, as their JSON files describe them. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TriggerRequest } from "../../supabase/functions/_shared/workflows/core/context.ts";
import type { SampleStandIns } from "../stand-ins/examples.ts";

/** One example: a workflow and sample runs with what each must produce. */
export interface Example {
  file: string;
  name: string;
  description: string;
  state: unknown;
  /** `standIns`: what the outside-reaching blocks' stand-ins answer (test/stand-ins/examples.ts). */
  samples: { description: string; trigger: TriggerRequest; env?: Record<string, string>; standIns?: SampleStandIns; expect: { status: string; output: unknown } }[];
}

const DIR = fileURLToPath(new URL("../../examples/workflows/", import.meta.url));

/** Every example file, parsed. */
export function loadExamples(): Example[] {
  return readdirSync(DIR)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(join(DIR, file), "utf8")) as Omit<Example, "file">) }));
}
