/**
 * What a model call costs, from `public.model_prices` (docs/workflow-runs.md, "Model prices"): the
 * rows are read once per function instance (refreshed every ten minutes) and priced with the
 * same formula, in exact decimals, that `finish_workflow_run` applies when it records the run:
 *
 *   input  = prompt tokens     × input price  × m / 1,000,000
 *   output = completion tokens × output price × m / 1,000,000
 *
 * with m the row's `hosted_multiplier` (2.5) for the platform's own provider key, 1 for the user's
 * own key. So the cost an Agent block reports and the cost recorded for the run are the same
 * decimal. A model without a price costs 0 and is reported `priced: false`, as the database does.
 */
import type { SupabaseClient } from "@supabase/supabase-js";
import { createServiceRoleClient } from "../../db/supabase-clients.ts";
import { add, decimal, format, multiply, shift, toNumber, ZERO, type Decimal } from "./decimal.ts";

/** One row of `public.model_prices`, with its numbers as exact decimal text. */
export interface ModelPriceRow {
  model: string;
  inputPerMillion: string;
  outputPerMillion: string;
  hostedMultiplier: string;
  /** ISO timestamp from which the row applies. */
  effectiveFrom: string;
}

/** Where prices come from: the database by default, a fixed list in tests. */
export interface PriceSource {
  /** Every price row (all models, all dates). */
  rows(): Promise<readonly ModelPriceRow[]>;
}

/** The cost of some model usage, exact and as numbers. */
export interface ModelCost {
  input: number;
  output: number;
  total: number;
  /** The same three as exact decimal text (`trim_scale` form). */
  exact: { input: string; output: string; total: string };
  /** False when the model has no price (it then costs 0). */
  priced: boolean;
}

/** The row in effect for `model` at `at` (epoch ms): the latest not after it. */
export function priceAt(rows: readonly ModelPriceRow[], model: string, at: number): ModelPriceRow | null {
  let best: ModelPriceRow | null = null;
  for (const row of rows) {
    if (row.model !== model || Date.parse(row.effectiveFrom) > at) continue;
    if (!best || Date.parse(row.effectiveFrom) > Date.parse(best.effectiveFrom)) best = row;
  }
  return best;
}

/** Exact input and output cost of one call (or of summed calls of one model). */
export function exactCost(row: ModelPriceRow | null, promptTokens: number, completionTokens: number, ownKey: boolean): { input: Decimal; output: Decimal } {
  if (!row) return { input: ZERO, output: ZERO };
  const multiplier = ownKey ? decimal(1) : decimal(row.hostedMultiplier);
  return {
    input: shift(multiply(multiply(decimal(BigInt(promptTokens)), decimal(row.inputPerMillion)), multiplier), 6),
    output: shift(multiply(multiply(decimal(BigInt(completionTokens)), decimal(row.outputPerMillion)), multiplier), 6),
  };
}

/** Sums exact costs and renders them as a ModelCost. */
export function costOf(parts: readonly { input: Decimal; output: Decimal }[], priced: boolean): ModelCost {
  const input = parts.reduce((sum, part) => add(sum, part.input), ZERO);
  const output = parts.reduce((sum, part) => add(sum, part.output), ZERO);
  const total = add(input, output);
  return { input: toNumber(input), output: toNumber(output), total: toNumber(total), exact: { input: format(input), output: format(output), total: format(total) }, priced };
}

/** How long a loaded price list is used before it is read again. */
const PRICE_LIST_TTL_MS = 10 * 60_000;

/**
 * Prices read from `public.model_prices` with the service role, once per instance (and every ten
 * minutes). `client` makes the client on first use (the service-role client by default).
 */
export function databasePriceSource(client: () => SupabaseClient = createServiceRoleClient): PriceSource {
  let cached: { at: number; rows: Promise<readonly ModelPriceRow[]> } | null = null;
  const load = async (): Promise<readonly ModelPriceRow[]> => {
    const { data, error } = await client()
      .from("model_prices")
      .select("model, inputPerMillion:input_per_million::text, outputPerMillion:output_per_million::text, hostedMultiplier:hosted_multiplier::text, effectiveFrom:effective_from");
    if (error) throw new Error(`model prices could not be read: ${error.message}`);
    return (data ?? []) as unknown as ModelPriceRow[];
  };
  return {
    rows() {
      if (!cached || Date.now() - cached.at > PRICE_LIST_TTL_MS) {
        const rows = load();
        // A failed read is not kept: the next call tries again.
        rows.catch(() => (cached = null));
        cached = { at: Date.now(), rows };
      }
      return cached.rows;
    },
  };
}

/** A fixed list of prices (tests, and runs that must not read the database). */
export function fixedPriceSource(rows: readonly ModelPriceRow[]): PriceSource {
  return { rows: () => Promise.resolve(rows) };
}
