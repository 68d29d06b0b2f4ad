/**
 * Block names as references see them. A reference `<Send Email.status>` and a block named
 * "send email" must meet, so both sides go through the same normalisation: lower-cased, with every
 * whitespace character removed (Sim's rule, kept so users' habits carry over).
 */

/** Heads that never name a block: they address the run's own state. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(["loop", "parallel", "variable"]);

/** What a normalised name may contain, so it can stand between `<` and `.` in a reference. */
export const NORMALIZED_NAME_PATTERN = /^[a-z0-9_-]+$/;

/** Lower-cases a block name and removes its whitespace: "Check Age 2" → "checkage2". */
export function normalizeBlockName(name: string): string {
  return name.toLowerCase().replace(/\s+/g, "");
}
