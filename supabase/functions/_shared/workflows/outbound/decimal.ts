/**
 * Exact decimal arithmetic for money, as Postgres `numeric` does it: a value is an integer and a
 * scale (digits after the point), so products and sums of prices never pick up binary rounding.
 * Only what pricing needs: parse, multiply, add, divide by a power of ten, print.
 */

/** A decimal number: `units × 10^-scale`. */
export interface Decimal {
  units: bigint;
  scale: number;
}

/** Parses `"2.5000"`, `"15"`, `"0.05"` (no exponent, no sign other than `-`). */
export function decimal(text: string | number | bigint): Decimal {
  const value = String(text).trim();
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(value);
  if (!match) throw new Error(`"${value}" is not a decimal number`);
  const fraction = match[3] ?? "";
  const units = BigInt(`${match[2]}${fraction}`);
  return { units: match[1] ? -units : units, scale: fraction.length };
}

function rescale(value: Decimal, scale: number): bigint {
  return value.units * 10n ** BigInt(scale - value.scale);
}

/** a + b */
export function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

/** a × b */
export function multiply(a: Decimal, b: Decimal): Decimal {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** a / 10^digits (exact: only the scale moves). */
export function shift(a: Decimal, digits: number): Decimal {
  return { units: a.units, scale: a.scale + digits };
}

/** The shortest exact text (Postgres's `trim_scale`): `"0.00625"`, `"2"`, `"0"`. */
export function format(value: Decimal): string {
  const negative = value.units < 0n;
  let digits = (negative ? -value.units : value.units).toString();
  let scale = value.scale;
  while (scale > 0 && digits.endsWith("0") && digits.length > 1) {
    digits = digits.slice(0, -1);
    scale--;
  }
  if (scale > 0 && digits === "0") scale = 0;
  const padded = digits.padStart(scale + 1, "0");
  const text = scale === 0 ? padded : `${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
  return negative && text !== "0" ? `-${text}` : text;
}

/** The nearest JavaScript number (what a JSON parser makes of the same text). */
export function toNumber(value: Decimal): number {
  return Number(format(value));
}

/** Zero. */
export const ZERO: Decimal = { units: 0n, scale: 0 };
