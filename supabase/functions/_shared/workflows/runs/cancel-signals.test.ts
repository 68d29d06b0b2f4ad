import { describe, expect, it } from "vitest";
import { CANCEL_CHANNEL, cancelSignals, type Listen } from "./cancel-signals.ts";

/** A stand-in for postgres.js's listen: records subscriptions and lets the test notify, or fail to listen. */
function channel(failures = 0) {
  const subscribers: { channel: string; onPayload: (payload: string) => void }[] = [];
  let left = failures;
  const listen: Listen = async (name, onPayload) => {
    if (left-- > 0) throw new Error("connection refused");
    subscribers.push({ channel: name, onPayload });
  };
  return { listen, subscribers, notify: (payload: string) => subscribers.forEach((subscriber) => subscriber.onPayload(payload)) };
}

describe("cancelSignals", () => {
  it("listens once, on the first watch, and calls only the watchers of the notified run until they stop watching", async () => {
    const db = channel();
    const signals = cancelSignals(db.listen, () => {});
    expect(db.subscribers).toHaveLength(0);
    const heard: string[] = [];
    const stopA = signals.watch("run-a", () => heard.push("a"));
    signals.watch("run-b", () => heard.push("b"));
    await Promise.resolve();
    expect(db.subscribers.map((subscriber) => subscriber.channel)).toEqual([CANCEL_CHANNEL]);
    db.notify("run-a");
    expect(heard).toEqual(["a"]);
    stopA();
    db.notify("run-a");
    db.notify("run-b");
    expect(heard).toEqual(["a", "b"]);
    expect(db.subscribers).toHaveLength(1);
  });

  it("logs a failed LISTEN and tries again on the next watch", async () => {
    const db = channel(1);
    const logged: string[] = [];
    const signals = cancelSignals(db.listen, (event) => logged.push(event));
    signals.watch("run-a", () => {});
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect([logged, db.subscribers.length]).toEqual([["cancel_listen_failed"], 0]);
    const heard: string[] = [];
    signals.watch("run-b", () => heard.push("b"));
    await Promise.resolve();
    db.notify("run-b");
    expect(heard).toEqual(["b"]);
  });

  it("watches nothing without a connection to listen on (the heartbeat stops runs then)", () => {
    const signals = cancelSignals(null, () => {});
    expect(() => signals.watch("run-a", () => {})()).not.toThrow();
  });
});
