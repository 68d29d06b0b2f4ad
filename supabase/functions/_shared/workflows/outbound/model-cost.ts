/**
 * What a block's model calls cost, as the database prices them: `public.price_model_usage` is the
 * one implementation of the formula (docs/workflow-runs.md, "Model prices"), and
 * finish_workflow_run applies the same function to the run's record, so the cost an Agent or LLM
 * Router reports and the cost recorded for the run are the same decimal. A block asks once, for
 * its calls' summed tokens: the formula is linear, so that is what pricing each call gives.
 */
import { z } from "zod";
import type { Rpc } from "../../db/rpc.ts";

/** One model call's token usage, as a block reports it for billing (finish_workflow_run's p_model_usage). */
export interface ModelUsage {
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** True when the user's own provider key paid for the call (priced without the hosted markup). */
  ownKey: boolean;
}

/** A block's model cost in USD, as its output shows it (a model without a price costs 0). */
export interface ModelCost {
  input: number;
  output: number;
  total: number;
}

/** Prices one model's usage (a block's calls, tokens summed). */
export type ModelPricing = (usage: ModelUsage) => Promise<ModelCost>;

/** The part of price_model_usage's answer a block reports; the per-model breakdown is the run record's. */
const blockCost = z.object({ input: z.number(), output: z.number(), total: z.number() });

/** Pricing by `public.price_model_usage`, called as the service role through `call`. */
export function databaseModelPricing(call: Rpc): ModelPricing {
  return async (usage) => blockCost.parse(await call("price_model_usage", { p_usage: [usage] }));
}
