import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWorkflow } from "../../supabase/functions/_shared/workflows/runs/run-workflow.ts";
import { sqlValidator } from "../helpers/workflows/sql-validator.ts";
import { ExampleStandIns } from "../stand-ins/examples.ts";
import { loadExamples } from "./examples.ts";

const examples = loadExamples();
const validator = sqlValidator();
let standIns: ExampleStandIns;
beforeAll(async () => {
  standIns = await ExampleStandIns.start();
});
afterAll(async () => {
  await Promise.all([standIns.close(), validator.close()]);
});

describe("the runnable examples in examples/workflows", () => {
  it("exist", () => {
    expect(examples.length).toBeGreaterThanOrEqual(8);
  });

  for (const example of examples) {
    describe(`${example.file}: ${example.name}`, () => {
      it("is a valid, deployable state", async () => {
        expect(await validator.stateIssues(example.state, "deploy")).toEqual([]);
      });

      for (const sample of example.samples) {
        it(`produces the documented output: ${sample.description}`, async () => {
          const { env, services } = standIns.prepare(sample.env, sample.standIns);
          const result = await runWorkflow({ workflow: example.state, trigger: sample.trigger, env, services });
          expect(result.status).toBe(sample.expect.status);
          expect(result.output).toEqual(sample.expect.output);
        });
      }
    });
  }
});
