import { describe, expect, it } from "vitest";
import { loadConfig, LOCAL_OUTBOUND_ALLOWED_HOSTS } from "../config.ts";
import { formatOutboundNotice } from "../summary.ts";
import { functionEnvironment } from "./launch.ts";

describe("the outbound allow-list of the local stacks", () => {
  it("opens loopback to the functions of `npm start` and `npm test`", () => {
    expect(LOCAL_OUTBOUND_ALLOWED_HOSTS).toBe("127.0.0.0/8,::1");
    for (const profile of ["dev", "test"] as const) expect(functionEnvironment(loadConfig(profile, 0)).OUTBOUND_ALLOWED_HOSTS).toBe(LOCAL_OUTBOUND_ALLOWED_HOSTS);
  });

  it("is printed on start-up, saying hosted deployments leave it empty", () => {
    expect(formatOutboundNotice(loadConfig("dev", 0))).toBe(
      "Workflows may call these non-public addresses: OUTBOUND_ALLOWED_HOSTS=127.0.0.0/8,::1 (local only; hosted deployments leave it empty).",
    );
  });
});
