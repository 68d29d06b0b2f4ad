import { describe, expect, it } from "vitest";
import { createLogger, REDACTED, redact, requestIdOf, requestLogger } from "./logger.ts";

function capture() {
  const lines: { level: string; line: Record<string, unknown> }[] = [];
  return { lines, sink: (level: string, line: string) => lines.push({ level, line: JSON.parse(line) }) };
}

describe("createLogger", () => {
  it("writes one JSON line with time, level, service, message and the fields", () => {
    const { lines, sink } = capture();
    createLogger("portal", {}, sink).info("proposal_email_sent", { proposalId: "p1" });
    expect(lines).toHaveLength(1);
    expect(lines[0].level).toBe("info");
    expect(lines[0].line).toMatchObject({ level: "info", service: "portal", message: "proposal_email_sent", proposalId: "p1" });
    expect(new Date(lines[0].line.time as string).toISOString()).toBe(lines[0].line.time);
  });

  it("puts time, level, service and message first, which no field can replace", () => {
    const { lines, sink } = capture();
    createLogger("portal", {}, sink).warn("odd", { message: "a field", level: "debug", proposalId: "p1" });
    expect(Object.keys(lines[0].line)).toEqual(["time", "level", "service", "message", "proposalId"]);
    expect(lines[0].line).toMatchObject({ level: "warn", message: "odd" });
  });

  it("adds the fields of `with` to every line", () => {
    const { lines, sink } = capture();
    const log = createLogger("gamification", {}, sink).with({ function: "api" });
    log.error("boom");
    log.warn("odd", { function: "overridden" });
    expect(lines.map(({ line }) => line.function)).toEqual(["api", "overridden"]);
  });

  it("sends warnings and errors to stderr and the rest to stdout by default", () => {
    const written: string[] = [];
    const original = { log: console.log, error: console.error };
    console.log = () => written.push("stdout");
    console.error = () => written.push("stderr");
    try {
      const log = createLogger("s");
      log.debug("a");
      log.info("b");
      log.warn("c");
      log.error("d");
    } finally {
      Object.assign(console, original);
    }
    expect(written).toEqual(["stdout", "stdout", "stderr", "stderr"]);
  });
});

describe("redact", () => {
  it("never lets a credential through, whatever its field or depth", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
    const value = redact({
      Authorization: `Bearer ${jwt}`,
      apikey: "anything",
      "X-API-Key": "key-1",
      api_key: "key-2",
      newPassword: "Orbita#2026",
      headers: { authorization: "Basic abc", cookie: "sb=1" },
      nested: [{ refresh_token: "r1", approval_token: "t1", client_secret: "s" }],
      message: `request failed for ${jwt} with sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz`,
      safe: "São Paulo",
    });
    const text = JSON.stringify(value);
    for (const secret of [jwt, "anything", "key-1", "key-2", "Orbita#2026", "Basic abc", "sb=1", "r1", "t1", "sb_secret_"]) expect(text).not.toContain(secret);
    expect(value).toMatchObject({ apikey: REDACTED, safe: "São Paulo", message: `request failed for ${REDACTED} with ${REDACTED}` });
  });

  it("reads Headers and Errors", () => {
    expect(redact(new Headers({ authorization: "Bearer x", "content-type": "text/plain" }))).toEqual({ authorization: REDACTED, "content-type": "text/plain" });
    expect(redact(new TypeError("bad"))).toEqual({ name: "TypeError", message: "bad" });
  });

  it("applies to logged fields", () => {
    const { lines, sink } = capture();
    createLogger("s", {}, sink).info("login", { password: "hunter2", user: "ana" });
    expect(lines[0].line).toMatchObject({ password: REDACTED, user: "ana" });
  });
});

describe("requestLogger", () => {
  it("adds the gateway's request id, the method and the path", () => {
    const { lines, sink } = capture();
    const request = new Request("http://local/approve-proposal?token=secret", { method: "POST", headers: { "sb-request-id": "req-1", "x-request-id": "req-2" } });
    requestLogger(createLogger("portal", {}, sink), request).info("answered");
    expect(lines[0].line).toMatchObject({ request_id: "req-1", method: "POST", path: "/approve-proposal" });
    expect(JSON.stringify(lines[0].line)).not.toContain("secret");
  });

  it("falls back to x-request-id, and leaves the id out when there is none", () => {
    expect(requestIdOf(new Request("http://local/", { headers: { "x-request-id": "req-2" } }))).toBe("req-2");
    const { lines, sink } = capture();
    requestLogger(createLogger("portal", {}, sink), new Request("http://local/")).info("x");
    expect(lines[0].line).not.toHaveProperty("request_id");
  });
});
