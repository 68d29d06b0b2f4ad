/**
 * Byte sizes as the two places that configure them write them. They differ on purpose: the CLI
 * reads `config.toml` sizes as binary units ("5MB" is 5 MiB, and "50MiB" is accepted), while the
 * Storage API reads a bucket's `file_size_limit` string with decimal units ("5MB" is 5,000,000).
 */

const BINARY_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};

/** Parses a `config.toml` size such as "50MiB" or "5MB" (binary units, as the CLI does); null when malformed. */
export function parseConfigSize(value: string | number): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : null;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  if (!match) return null;
  const unit = BINARY_UNITS[match[2].toLowerCase()];
  if (unit === undefined) return null;
  return Math.round(Number(match[1]) * unit);
}

const DECIMAL_UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9 };

/** Parses a bucket `file_size_limit` given as a string ("20MB", "300KB", "3B"); null when malformed. */
export function parseBucketSize(value: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(gb|mb|kb|b)$/i.exec(value.trim());
  if (!match) return null;
  return Math.round(Number(match[1]) * DECIMAL_UNITS[match[2].toLowerCase()]);
}
