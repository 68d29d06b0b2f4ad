import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../config/stack-config.ts";
import { PlatformError } from "../process/errors.ts";
import { privileged, run } from "../process/system.ts";

/** Debian packages the stack needs to run. */
export const RUNTIME_PACKAGES = [
  "postgresql-15",
  "postgresql-15-cron",
  "postgresql-15-pgtap",
  "postgresql-15-plpgsql-check",
  // The gateway's public half (platform/gateway/front.ts); Debian's build includes Lua.
  "haproxy",
];

/** Extra packages the test suite needs: pg_prove ships with pgTAP; a browser and pdftotext for the portal tests. */
export const TEST_PACKAGES = ["libtap-parser-sourcehandler-pgtap-perl", "chromium", "poppler-utils"];

/** Extra packages the benches need: Redis, the gamification bench's baseline for a leaderboard position. */
export const BENCH_PACKAGES = ["redis-server"];

/** Debian's PostgreSQL 15 binaries. */
export const PG_BIN = "/usr/lib/postgresql/15/bin";

/** Packages from the list that dpkg does not report as installed. */
export function missingPackages(packages: string[]): string[] {
  return packages.filter((name) => {
    const status = run("dpkg-query", ["-W", "-f=${Status}", name]);
    return !(status.ok && status.stdout.includes("install ok installed"));
  });
}

/**
 * Installs missing Debian packages. The Debian postgresql package would create and start a
 * default cluster on 5432; the platform runs its own, so that is switched off first.
 */
export function installPackages(packages: string[]): void {
  if (packages.length === 0) return;
  const createclusterConf = "/etc/postgresql-common/createcluster.conf";
  if (!existsSync(createclusterConf)) {
    const [mk, mkArgs] = privileged("mkdir", ["-p", "/etc/postgresql-common"]);
    run(mk, mkArgs);
    const [sh, shArgs] = privileged("sh", ["-c", `echo 'create_main_cluster = false' > ${createclusterConf}`]);
    run(sh, shArgs);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const [update, updateArgs] = privileged("apt-get", ["update", "-qq"]);
  run(update, updateArgs, { env });
  // Keep the createcluster.conf written above if dpkg meets it as a conffile; never prompt.
  const dpkgOptions = ["-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"];
  const [install, installArgs] = privileged("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...dpkgOptions, ...packages]);
  const result = run(install, installArgs, { env });
  if (!result.ok) {
    const reason = (result.stderr || result.stdout).trim().split("\n").pop() ?? "unknown error";
    throw new PlatformError(
      `Could not install Debian packages ${packages.join(", ")}: ${reason}`,
      `Install them by hand (sudo apt-get install ${packages.join(" ")}) and run the command again.`,
    );
  }
}

const PGMQ_MARKER = "orbita-pgmq-compatible";

/**
 * Puts the project's pgmq-compatible extension into the local Postgres when the real pgmq is
 * absent, and refreshes it when the project's copy changed. A real pgmq is never overwritten.
 */
export function installPgmqExtension(): "real" | "installed" | "current" {
  const sharedir = run(join(PG_BIN, "pg_config"), ["--sharedir"]).stdout.trim();
  const target = join(sharedir, "extension");
  const control = join(target, "pgmq.control");
  if (existsSync(control) && !readFileSync(control, "utf8").includes(PGMQ_MARKER)) return "real";
  const source = join(PROJECT_ROOT, "platform", "extensions", "pgmq");
  const files = ["pgmq.control", "pgmq--1.4.4.sql"];
  const current = files.every(
    (file) => existsSync(join(target, file)) && readFileSync(join(target, file), "utf8") === readFileSync(join(source, file), "utf8"),
  );
  if (current) return "current";
  for (const file of files) {
    try {
      copyFileSync(join(source, file), join(target, file));
    } catch {
      const [cp, cpArgs] = privileged("cp", [join(source, file), join(target, file)]);
      if (!run(cp, cpArgs).ok) {
        throw new PlatformError(`Could not install the pgmq-compatible extension into ${target}.`, "Run the command as root or with passwordless sudo.");
      }
    }
  }
  return "installed";
}

const RESERVED_PORTS_FILE = "/proc/sys/net/ipv4/ip_local_reserved_ports";

/**
 * The platform's ports (dev 543xx; test slots 0–9 553xx–562xx, benches 573xx–582xx, and the
 * own stacks of test/helpers/own-stack.ts 593xx–642xx) lie mostly inside Linux's ephemeral
 * range, so an outgoing connection can briefly take one as its source port and make the next start
 * fail with "port in use". Reserving them keeps the kernel from handing them out. Returns false
 * where the setting cannot be changed (not root, or a read-only /proc).
 */
export function reservePlatformPorts(ranges = ["54320-54346", "55320-60999"]): boolean {
  if (!existsSync(RESERVED_PORTS_FILE)) return false;
  const current = readFileSync(RESERVED_PORTS_FILE, "utf8").trim();
  const missing = ranges.filter((range) => !current.split(",").includes(range));
  if (missing.length === 0) return true;
  try {
    writeFileSync(RESERVED_PORTS_FILE, [current, ...missing].filter(Boolean).join(","));
    return true;
  } catch {
    return false;
  }
}
