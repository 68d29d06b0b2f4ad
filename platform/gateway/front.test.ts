import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/stack-config.ts";
import { run } from "../process/system.ts";
import { HAPROXY, writeFrontConfig } from "./front.ts";
import { createGatewayCredential, GATEWAY_CREDENTIAL_HEADER, GATEWAY_CREDENTIAL_VARIABLE } from "./internal-credential.ts";

describe("the gateway's HAProxy configuration", () => {
  const runtimeDir = mkdtempSync(join(tmpdir(), "orbita-front-"));
  const config = { ...loadConfig("test"), runtimeDir, trustedProxies: "10.0.0.0/8, 2001:db8::1" };
  const configFile = writeFrontConfig(config);
  const credential = createGatewayCredential(config);
  afterAll(() => rmSync(runtimeDir, { recursive: true, force: true }));

  it("is a configuration HAProxy accepts, Lua settings included, with the gateway's credential in its environment", () => {
    const checked = run(HAPROXY, ["-c", "-f", configFile], { env: { ...process.env, [GATEWAY_CREDENTIAL_VARIABLE]: credential } });
    expect(checked.stderr + checked.stdout).toContain("Configuration file is valid");
    expect(checked.ok).toBe(true);
    // Without it front.lua refuses to load rather than send requests the node half would refuse.
    const without = run(HAPROXY, ["-c", "-f", configFile], { env: { ...process.env, [GATEWAY_CREDENTIAL_VARIABLE]: "" } });
    expect(without.ok).toBe(false);
    expect(without.stderr).toContain(`${GATEWAY_CREDENTIAL_VARIABLE} is not set`);
  });

  it("sends the credential to pg-meta and the node half only, never to PostgREST or the functions host, and keeps it out of every file but its own", () => {
    const backends = readFileSync(configFile, "utf8").split(/\n(?=backend )/).slice(1);
    const withCredential = backends.filter((section) => section.includes(`set-header ${GATEWAY_CREDENTIAL_HEADER} "\${${GATEWAY_CREDENTIAL_VARIABLE}}"`)).map((section) => section.split("\n")[0]);
    expect(withCredential).toEqual(["backend auth", "backend storage", "backend meta", "backend rest_counted"]);
    for (const file of [configFile, join(runtimeDir, "gateway", "settings.lua")]) expect(readFileSync(file, "utf8")).not.toContain(credential);
    expect(statSync(join(runtimeDir, "gateway", "credential")).mode & 0o777).toBe(0o600);
  });

  it("keeps the keys in a settings file only its owner reads, and trusts the listed proxies and the functions host", () => {
    const settings = join(runtimeDir, "gateway", "settings.lua");
    expect(statSync(settings).mode & 0o077).toBe(0);
    expect(readFileSync(settings, "utf8")).toContain(config.serviceRoleKey);
    expect(readFileSync(configFile, "utf8")).not.toContain(config.serviceRoleKey);
    expect(readFileSync(join(runtimeDir, "gateway", "trusted-proxies.map"), "utf8")).toBe("10.0.0.0/8 1\n2001:db8::1 1\n127.0.0.2 1\n");
  });

  it("answers an unreachable service with 502 in that service's error shape", () => {
    const [head, body] = readFileSync(join(runtimeDir, "gateway", "rest-unreachable.http"), "utf8").split("\r\n\r\n");
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 502 Bad Gateway");
    expect(JSON.parse(body)).toEqual({ code: "upstream_unavailable", message: "The rest service is not reachable", details: null, hint: null });
  });
});
