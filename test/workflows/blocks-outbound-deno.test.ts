/**
 * The outbound guard under Deno, the functions' runtime: the same module, run by the project's Deno
 * against an HTTPS server with a throw-away CA, connects to the checked address with the URL's
 * name as SNI, and refuses a certificate for another name and one from an unknown authority.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { makeTestCertificates } from "../stand-ins/tls.ts";

let server: Server;
let port: number;
let ca: string;
beforeAll(async () => {
  const certificates = makeTestCertificates(["secure.test"]);
  ca = certificates.ca;
  server = createServer({ key: certificates.key, cert: certificates.cert }, (request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ host: request.headers.host, servername: (request.socket as { servername?: string }).servername }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("the outbound guard under Deno", () => {
  it("pins the connection, verifies TLS against the name, and refuses wrong names and unknown authorities", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orbita-deno-guard-"));
    try {
      const guard = join(PROJECT_ROOT, "supabase", "functions", "_shared", "workflows", "outbound", "guard.ts");
      const addresses = join(PROJECT_ROOT, "supabase", "functions", "_shared", "workflows", "outbound", "addresses.ts");
      writeFileSync(join(dir, "ca.pem"), ca);
      writeFileSync(
        join(dir, "check.ts"),
        `import { guardedFetch } from ${JSON.stringify(guard)};
import { parseAllowList } from ${JSON.stringify(addresses)};
const ca = Deno.readTextFileSync(${JSON.stringify(join(dir, "ca.pem"))});
const lookups: string[] = [];
const policy = { allow: parseAllowList("127.0.0.0/8"), resolve: async (host: string) => { lookups.push(host); return ["127.0.0.1"]; } };
const outcome = async (url: string, caCerts?: string[]) => {
  try { const response = await guardedFetch(url, { policy, caCerts }); return { status: response.status, body: await response.json() }; }
  catch (error) { return { code: (error as { code?: string }).code }; }
};
console.log(JSON.stringify({
  ok: await outcome("https://secure.test:${port}/", [ca]),
  wrongName: await outcome("https://impostor.test:${port}/", [ca]),
  untrusted: await outcome("https://secure.test:${port}/"),
  blocked: await outcome("https://169.254.169.254/"),
  lookups,
}));
`,
      );
      // Asynchronously: the HTTPS server answering Deno lives in this process.
      const deno = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
        execFile(
          join(PROJECT_ROOT, "node_modules", ".bin", "deno"),
          ["run", "-A", "--no-lock", "--no-check", "--node-modules-dir=manual", `--import-map=${join(PROJECT_ROOT, "supabase", "functions", "import_map.json")}`, join(dir, "check.ts")],
          { cwd: PROJECT_ROOT, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }, timeout: 60_000 },
          (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ stdout, stderr })),
        ),
      );
      expect(deno.stderr).toBe("");
      expect(JSON.parse(deno.stdout)).toEqual({
        ok: { status: 200, body: { host: `secure.test:${port}`, servername: "secure.test" } },
        wrongName: { code: "OUTBOUND_CONNECTION" },
        untrusted: { code: "OUTBOUND_CONNECTION" },
        blocked: { code: "OUTBOUND_BLOCKED" },
        lookups: ["secure.test", "impostor.test", "secure.test"],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
