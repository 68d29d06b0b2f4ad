const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  "μs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Parses a Go duration string ("24h", "1h30m", "876000h", "-5m", "0") into milliseconds, as
 * GoTrue's `ban_duration` uses Go's time.ParseDuration. Throws with Go's own messages, which
 * GoTrue puts after "invalid format for ban duration: ".
 */
export function parseGoDuration(input: string): number {
  const quoted = JSON.stringify(input);
  let rest = input;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    sign = rest.startsWith("-") ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") throw new Error(`time: invalid duration ${quoted}`);
  let total = 0;
  while (rest !== "") {
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest);
    const whole = number?.[1] ?? "";
    const fraction = number?.[2];
    if (!number || (whole === "" && (fraction === undefined || fraction === ""))) throw new Error(`time: invalid duration ${quoted}`);
    rest = rest.slice(number[0].length);
    const unit = /^[^\d.]*/.exec(rest)?.[0] ?? "";
    if (unit === "") throw new Error(`time: missing unit in duration ${quoted}`);
    const scale = UNIT_MS[unit];
    if (scale === undefined) throw new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    rest = rest.slice(unit.length);
    total += Number(`${whole || "0"}.${fraction ?? ""}0`) * scale;
  }
  return sign * total;
}
