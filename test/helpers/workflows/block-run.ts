/**
 * A BlockRun for handler unit tests: real sandbox and clock by default, no trigger, a generous
 * deadline.
 */
import { memoryFileStore } from "../../../supabase/functions/_shared/workflows/core/files.ts";
import { inlineSandbox } from "../../../supabase/functions/_shared/workflows/sandbox/sandbox.ts";
import { systemClock } from "../../../supabase/functions/_shared/workflows/core/clock.ts";
import type { BlockIdentity } from "../../../supabase/functions/_shared/workflows/core/errors.ts";
import type { BlockRun } from "../../../supabase/functions/_shared/workflows/core/block-handler.ts";
import { defaultOutboundServices } from "../../../supabase/functions/_shared/workflows/outbound/services.ts";

/** Builds a BlockRun around `input`; `overrides` replace any part. */
export function testRun<Input>(input: Input, overrides: Partial<BlockRun<Input>> = {}): BlockRun<Input> {
  const targets: Record<string, BlockIdentity[]> = {};
  // A test that sets only `deadline` means the block's and the run's: both limits follow it.
  const now = Date.now();
  const deadline = overrides.deadline ?? now + 5_000;
  return {
    block: { id: "b1", name: "Block", type: "test" },
    executionId: "run-1",
    input,
    signal: new AbortController().signal,
    deadline,
    timeoutMs: Math.max(0, deadline - now),
    runDeadline: deadline,
    account: null,
    services: { sandbox: inlineSandbox, clock: systemClock, files: memoryFileStore(() => "f1", () => Date.now()), newId: () => "id-1", outbound: defaultOutboundServices() },
    variables: new Map(),
    trigger: null,
    targetsOf: (handle) => targets[handle] ?? [],
    emitChunk: () => {},
    traceHeaders: () => ({}),
    recordModelUsage: () => {},
    durable: false,
    pause: (ms) => systemClock.sleep(ms, new AbortController().signal),
    awaitApproval: () => Promise.reject(new Error("this test run cannot wait for approvals")),
    ...overrides,
  };
}
