import { describe, expect, it } from "vitest";
import { accountShare, FairQueue } from "./fair-queue.ts";

const call = (owner: string, account: string | null = null) => ({ owner, account });

describe("the sandbox pool's fair queue", () => {
  it("gives an account at most half the pool, rounded up", () => {
    expect([1, 2, 3, 4, 5].map(accountShare)).toEqual([1, 1, 2, 2, 3]);
  });

  it("puts the account holding the fewest threads first, and holds one back at its share", () => {
    const queue = new FairQueue<ReturnType<typeof call>>(4);
    const [a1, a2, a3, b1] = [call("run-a", "acct-a"), call("run-a", "acct-a"), call("run-a", "acct-a"), call("run-b", "acct-b")];
    for (const entry of [a1, a2, a3, b1]) queue.push(entry);
    for (const expected of [a1, b1, a2]) {
      expect(queue.next()).toBe(expected);
      queue.start(expected);
    }
    expect(queue.next(), "acct-a holds its 2 of 4 threads").toBeUndefined();
    queue.finish(a1);
    expect(queue.next()).toBe(a3);
    expect(queue.length).toBe(1);
  });

  it("serves the run holding the fewest threads, then the one served longest ago", () => {
    const queue = new FairQueue<ReturnType<typeof call>>(8);
    const entries = [call("x"), call("x"), call("y"), call("z")];
    for (const entry of entries) queue.push(entry);
    const order: string[] = [];
    for (let next = queue.next(); next; next = queue.next()) {
      order.push(next.owner);
      queue.start(next);
    }
    expect(order).toEqual(["x", "y", "z", "x"]);
  });

  it("forgets a call that gives up, and hands every waiting call back when drained", () => {
    const queue = new FairQueue<ReturnType<typeof call>>(2);
    const [first, second] = [call("a"), call("b")];
    queue.push(first);
    queue.push(second);
    expect(queue.remove(first)).toBe(true);
    expect(queue.remove(first)).toBe(false);
    expect(queue.drain()).toEqual([second]);
    expect(queue.length).toBe(0);
  });
});
