/**
 * The sandbox pool's waiting calls and which of them starts next, so threads are shared fairly
 * between tenants and their runs:
 *
 *  - a billing account holds at most its share of the threads (half the pool, rounded up: 2 of 4),
 *    so one tenant's wide parallel of spinning Functions can never take every thread; its surplus
 *    calls wait while others' calls go first, even when threads are free;
 *  - when every thread is busy, calls queue; a free thread takes the waiting call of the account,
 *    then the run, holding the fewest threads, then of the run served longest ago.
 */

/** The most threads of a pool of `size` one billing account may hold at once: half, rounded up. */
export function accountShare(size: number): number {
  return Math.max(1, Math.ceil(size / 2));
}

/** What the queue knows of a call: its run and the billing account held to its share. */
export interface FairQueueEntry {
  owner: string;
  /** Null for a call without an account, which no share holds back. */
  account: string | null;
}

/** The waiting calls of a pool of `size` threads, and the threads each run and account holds. */
export class FairQueue<Entry extends FairQueueEntry> {
  private readonly waiting: Entry[] = [];
  private readonly runningByOwner = new Map<string, number>();
  private readonly runningByAccount = new Map<string, number>();
  /** When each run last got a thread (a sequence number), to serve runs in turn. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;

  constructor(private readonly size: number) {}

  /** How many calls wait. */
  get length(): number {
    return this.waiting.length;
  }

  /** A call starts waiting. */
  push(entry: Entry): void {
    this.waiting.push(entry);
  }

  /** A waiting call gives up (cancelled, or out of time); false when it was not waiting. */
  remove(entry: Entry): boolean {
    const index = this.waiting.indexOf(entry);
    if (index < 0) return false;
    this.waiting.splice(index, 1);
    return true;
  }

  /** Every waiting call, taken off the queue (the pool fails them all). */
  drain(): Entry[] {
    return this.waiting.splice(0);
  }

  /**
   * The call to start next, or undefined when every waiting call's account holds its share: of the
   * account holding the fewest threads, then of the run holding the fewest, then of the run served
   * longest ago (round robin), then the earliest.
   */
  next(): Entry | undefined {
    const share = accountShare(this.size);
    let best: Entry | undefined;
    let bestAccount = Number.POSITIVE_INFINITY;
    let bestHolding = Number.POSITIVE_INFINITY;
    let bestServed = Number.POSITIVE_INFINITY;
    for (const entry of this.waiting) {
      const { owner, account } = entry;
      const accountHolding = account === null ? 0 : this.runningByAccount.get(account) ?? 0;
      if (accountHolding >= share) continue;
      const holding = this.runningByOwner.get(owner) ?? 0;
      const served = this.lastServed.get(owner) ?? -1;
      if (accountHolding < bestAccount
        || (accountHolding === bestAccount && (holding < bestHolding || (holding === bestHolding && served < bestServed)))) {
        best = entry;
        bestAccount = accountHolding;
        bestHolding = holding;
        bestServed = served;
      }
    }
    return best;
  }

  /** `entry` (what `next` gave) leaves the queue for a thread: its run and account hold one more. */
  start(entry: Entry): void {
    this.remove(entry);
    this.lastServed.set(entry.owner, this.served++);
    this.forgetIdleRuns();
    this.runningByOwner.set(entry.owner, (this.runningByOwner.get(entry.owner) ?? 0) + 1);
    if (entry.account !== null) this.runningByAccount.set(entry.account, (this.runningByAccount.get(entry.account) ?? 0) + 1);
  }

  /** A started call is over: its run and account hold one thread fewer. */
  finish(entry: Entry): void {
    decrement(this.runningByOwner, entry.owner);
    if (entry.account !== null) decrement(this.runningByAccount, entry.account);
  }

  /** Keeps the round robin's memory to the runs still waiting or running. */
  private forgetIdleRuns(): void {
    if (this.lastServed.size <= 4 * this.size + this.waiting.length) return;
    const active = new Set([...this.waiting.map((entry) => entry.owner), ...this.runningByOwner.keys()]);
    for (const owner of this.lastServed.keys()) if (!active.has(owner)) this.lastServed.delete(owner);
  }
}

/** One thread fewer held under `key`, forgetting keys that hold none. */
function decrement(holding: Map<string, number>, key: string): void {
  const left = (holding.get(key) ?? 1) - 1;
  if (left > 0) holding.set(key, left);
  else holding.delete(key);
}
