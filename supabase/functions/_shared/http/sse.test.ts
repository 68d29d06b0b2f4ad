import { describe, expect, it, vi } from "vitest";
import { createSse } from "./sse.ts";

async function readAll(response: Response): Promise<string> {
  return await response.text();
}

describe("createSse", () => {
  it("writes data events as JSON, raw data lines, comments, and ends on close", async () => {
    const { response, writer } = createSse({ heartbeatMs: 0 });
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("cache-control")).toContain("no-cache");
    writer.send({ block: "a", output: "olá\nmundo" });
    writer.send({ done: true }, "final");
    writer.comment("keep going");
    writer.sendRaw("[DONE]");
    writer.close();
    expect(writer.closed).toBe(true);
    expect(await readAll(response)).toBe(
      'data: {"block":"a","output":"olá\\nmundo"}\n\nevent: final\ndata: {"done":true}\n\n: keep going\n\ndata: [DONE]\n\n',
    );
  });

  it("splits multi-line raw data into data lines, and ignores writes after close", async () => {
    const { response, writer } = createSse({ heartbeatMs: 0 });
    writer.sendRaw("one\ntwo\r\nthree");
    writer.close();
    writer.send({ late: true });
    writer.close();
    expect(await readAll(response)).toBe("data: one\ndata: two\ndata: three\n\n");
  });

  it("sends heartbeat comments while the stream is quiet, and stops them on close", async () => {
    vi.useFakeTimers();
    try {
      const { response, writer } = createSse({ heartbeatMs: 1000 });
      vi.advanceTimersByTime(2500);
      writer.close();
      vi.advanceTimersByTime(5000);
      expect(await readAll(response)).toBe(": heartbeat\n\n: heartbeat\n\n");
    } finally {
      vi.useRealTimers();
    }
  });

  it("aborts its signal when the client cancels the stream, and then drops writes", async () => {
    const { response, writer } = createSse({ heartbeatMs: 0 });
    const aborted = vi.fn();
    writer.signal.addEventListener("abort", aborted);
    await response.body!.cancel();
    expect(aborted).toHaveBeenCalledOnce();
    expect(writer.closed).toBe(true);
    expect(() => writer.send({ after: "disconnect" })).not.toThrow();
  });

  it("aborts when the request's own signal does (the runtime saw the client leave)", async () => {
    const client = new AbortController();
    const { writer } = createSse({ heartbeatMs: 0, signal: client.signal });
    expect(writer.signal.aborted).toBe(false);
    client.abort();
    expect(writer.signal.aborted).toBe(true);
    expect(writer.closed).toBe(true);
  });

  it("does not abort on a normal close", () => {
    const { writer } = createSse({ heartbeatMs: 0 });
    writer.close();
    expect(writer.signal.aborted).toBe(false);
  });
});
