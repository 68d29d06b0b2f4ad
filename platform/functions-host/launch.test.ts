import { describe, expect, it } from "vitest";
import { parseAllowList, parseDeniedAddresses, addressListed, parseAddress } from "../../supabase/functions/_shared/workflows/outbound/addresses.ts";
import { listeningPorts, loadConfig, type ProfileName } from "../config/stack-config.ts";
import { formatOutboundNotice } from "../commands/summary.ts";
import { functionEnvironment } from "./launch.ts";

const STACKS: [ProfileName, number][] = [["dev", 0], ["test", 0], ["test", 6], ["test", 9], ["bench", 0]];

describe("the outbound allow-list of the local stacks", () => {
  it("opens loopback on the unprivileged ports around the dev stack's own", () => {
    expect(functionEnvironment(loadConfig("dev", 0)).OUTBOUND_ALLOWED_HOSTS).toBe(
      ["127.0.0.0/8", "[::1]"].map((host) => ["1024-54320", "54325-54329", "54333-54335", "54338-54345", "54347-65535"].map((range) => `${host}:${range}`).join(",")).join(","),
    );
  });

  it.each(STACKS)("never names a port the %s stack (slot %i) listens on, and names every other unprivileged port", (profile, slot) => {
    const config = loadConfig(profile, slot);
    const env = functionEnvironment(config);
    const allow = parseAllowList(env.OUTBOUND_ALLOWED_HOSTS);
    const deny = parseDeniedAddresses(env.OUTBOUND_DENIED_ADDRESSES);
    const own = new Set(listeningPorts(config.ports));
    expect(own.size).toBe(10);
    const wrong: string[] = [];
    for (const text of ["127.0.0.1", "127.0.0.53", "::1", "::ffff:127.0.0.1"]) {
      const address = parseAddress(text)!;
      for (let port = 1; port <= 65535; port++) {
        if (addressListed(allow, address, port) !== (port >= 1024 && !own.has(port))) wrong.push(`allowed ${text}:${port}`);
        if (addressListed(deny, address, port) !== own.has(port)) wrong.push(`denied ${text}:${port}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("keeps the stack's own ports denied whatever supabase/functions/.env says", () => {
    const config = loadConfig("test", 6);
    expect(functionEnvironment(config).OUTBOUND_DENIED_ADDRESSES).toContain(`0.0.0.0/0:${config.ports.pgMeta},[::/0]:${config.ports.pgMeta}`);
  });

  it("is printed on start-up, saying hosted deployments leave it empty", () => {
    const config = loadConfig("dev", 0);
    expect(formatOutboundNotice(config)).toBe(
      `Workflows may call these non-public addresses: OUTBOUND_ALLOWED_HOSTS=${functionEnvironment(config).OUTBOUND_ALLOWED_HOSTS} (never the stack's own ports, which OUTBOUND_DENIED_ADDRESSES refuses; local only; hosted deployments leave both empty).`,
    );
  });
});
