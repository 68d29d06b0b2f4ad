/**
 * A throw-away certificate authority and a server certificate it signed, made with the system's
 * `openssl`, for stand-ins that speak HTTPS. Nothing is trusted globally: tests pass `ca` to the
 * client that should trust it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** PEM texts of a test CA and of a server key and certificate for `names`. */
export interface TestCertificates {
  ca: string;
  key: string;
  cert: string;
}

/** Makes a CA and a certificate for `names` (DNS names or IP addresses), valid for a day. */
export function makeTestCertificates(names: string[]): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), "orbita-tls-"));
  const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  try {
    run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=Orbita test CA"]);
    run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", `/CN=${names[0]}`]);
    const altNames = names.map((name) => (/^[\d.]+$|:/.test(name) ? `IP:${name}` : `DNS:${name}`)).join(",");
    writeFileSync(join(dir, "ext.cnf"), `subjectAltName=${altNames}\n`);
    run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "ext.cnf"]);
    return { ca: readFileSync(join(dir, "ca.pem"), "utf8"), key: readFileSync(join(dir, "server.key"), "utf8"), cert: readFileSync(join(dir, "server.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
