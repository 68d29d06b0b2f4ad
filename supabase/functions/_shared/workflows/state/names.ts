/**
 * Block names as references see them. A reference `<Send Email.status>` and a block named
 * "send email" must meet, so both sides go through the same normalisation: lower-cased, with every
 * whitespace character removed (Sim's rule, kept so users' habits carry over).
 */

/** Lower-cases a block name and removes its whitespace: "Check Age 2" → "checkage2". */
export function normalizeBlockName(name: string): string {
  return name.toLowerCase().replace(/\s+/g, "");
}
