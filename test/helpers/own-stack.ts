/**
 * Slots for the test files that need a stack or cluster of their own, because they kill processes
 * or restart Postgres and must not disturb the shared test stack. Each file has its own decade of
 * slots, shifted by the run's ORBITA_TEST_SLOT (0–9), so no two runs on one machine share a port:
 * test stacks take slots 0–9, a bench's ports are a test stack's slots 20–29, these take 40–89.
 * One table, so a new file cannot take a decade another already has.
 */
const OWN_STACK_DECADES = { lifecycle: 40, webhookResilience: 50, supervision: 60, asyncWorkerKill: 80 } as const;

/** The slot (a `loadConfig("test", slot)` argument) of `file`'s own stack in this run. */
export function ownStackSlot(file: keyof typeof OWN_STACK_DECADES): number {
  return OWN_STACK_DECADES[file] + Number(process.env.ORBITA_TEST_SLOT ?? 0);
}
