/**
 * The delivery worker's settings, from the function's environment. Production runs the defaults;
 * the test stack shortens the schedule and the time limit (test/fixtures/functions.env) so the
 * retry schedule and timeouts are proven in seconds rather than a quarter of an hour.
 */
import { readEnv } from "../../../config/env.ts";

/** Settings of the delivery worker. */
export interface DeliverySettings {
  /** An attempt's time limit: 30 s (spec, Limits). WEBHOOK_DELIVERY_TIMEOUT_MS. */
  timeoutMs: number;
  /** Multiplies the retry delays: 1. WEBHOOK_RETRY_DELAY_SCALE, above 0 and at most 1. */
  retryScale: number;
}

/** The spec's delivery timeout. */
export const DELIVERY_TIMEOUT_MS = 30_000;

function numberSetting(name: string, fallback: number, valid: (value: number) => boolean, read: (name: string) => string | undefined): number {
  const raw = read(name);
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || !valid(value)) throw new Error(`${name} is "${raw}", which is not a valid setting`);
  return value;
}

/** The settings in effect (throws, naming the variable, for a value that makes no sense). */
export function deliverySettings(read: (name: string) => string | undefined = readEnv): DeliverySettings {
  return {
    timeoutMs: numberSetting("WEBHOOK_DELIVERY_TIMEOUT_MS", DELIVERY_TIMEOUT_MS, (value) => Number.isInteger(value) && value >= 100 && value <= DELIVERY_TIMEOUT_MS, read),
    retryScale: numberSetting("WEBHOOK_RETRY_DELAY_SCALE", 1, (value) => value > 0 && value <= 1, read),
  };
}
