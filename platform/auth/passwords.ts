import bcrypt from "bcryptjs";
import { randomInt } from "node:crypto";
import { AuthError, badRequest } from "./errors.ts";
import type { AuthSettings } from "./settings.ts";

/** bcrypt reads at most 72 bytes; GoTrue refuses longer passwords rather than truncating them. */
export const MAX_PASSWORD_BYTES = 72;

/** GoTrue's bcrypt cost (Go's bcrypt.DefaultCost). */
const COST = 10;

/**
 * Hashes a password the way GoTrue stores it: bcrypt, cost 10, `$2a$` prefix (Go's x/crypto/bcrypt).
 * bcryptjs salts as `$2b$`; for inputs under 255 bytes 2a and 2b compute the same hash, so only the
 * prefix is rewritten to keep stored hashes byte-compatible with GoTrue's.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = (await bcrypt.genSalt(COST)).replace(/^\$2b\$/, "$2a$");
  return bcrypt.hash(password, salt);
}

/**
 * Checks a password against a stored hash. Accepts any bcrypt variant, including the `$2a$06$`
 * hashes pgcrypto's `crypt(pw, gen_salt('bf'))` writes in seed files. A hash that is not bcrypt
 * (e.g. argon2 imported through `password_hash`) never matches here.
 */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  if (!hash || !/^\$2[abxy]\$\d\d\$[./A-Za-z0-9]{53}$/.test(hash)) return false;
  return bcrypt.compare(password, hash);
}

/** Whether a string is a bcrypt hash GoTrue would accept as `password_hash`. */
export function isBcryptHash(hash: string): boolean {
  return /^\$2[abxy]\$\d\d\$[./A-Za-z0-9]{53}$/.test(hash);
}

/** Unicode control characters (Cc): U+0000–U+001F, U+007F–U+009F. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/**
 * GoTrue's `checkPasswordStrength`: too long is 400 validation_failed; too short or missing a
 * required character set is 422 weak_password with `reasons` (`length`, `characters`).
 * Lengths are counted in bytes, as Go's len() does.
 *
 * One rule GoTrue does not have: a control character (NUL, tab, line break, escape, DEL, C1) is
 * 400 validation_failed too, in the shape of the length error, because it is an invalid input
 * rather than a weak one. Nobody types one on purpose; a NUL is cut off by C bcrypt
 * implementations (pgcrypto's crypt among them), so "\u0000Abcdefgh12" would match an empty
 * password there; and the others cannot be typed back on every keyboard or form.
 */
export function checkPasswordStrength(password: string, settings: AuthSettings): void {
  const bytes = Buffer.byteLength(password, "utf8");
  if (bytes > MAX_PASSWORD_BYTES) {
    throw badRequest("validation_failed", `Password cannot be longer than ${MAX_PASSWORD_BYTES} characters`);
  }
  if (CONTROL_CHARACTER.test(password)) throw badRequest("validation_failed", "Password cannot contain control characters");
  const reasons: string[] = [];
  const messages: string[] = [];
  if (bytes < settings.minimumPasswordLength) {
    reasons.push("length");
    messages.push(`Password should be at least ${settings.minimumPasswordLength} characters.`);
  }
  const missesASet = settings.requiredCharacters.some((set) => set !== "" && ![...set].some((character) => password.includes(character)));
  if (missesASet) {
    reasons.push("characters");
    messages.push(`Password should contain at least one character of each: ${settings.requiredCharacters.join(", ")}.`);
  }
  if (reasons.length > 0) throw new AuthError(422, "weak_password", messages.join(" "), reasons);
}

const PASSWORD_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const PASSWORD_DIGITS = "0123456789";

/**
 * The password admin create generates when none is given (GoTrue: 64 characters, 10 of them
 * digits, no symbols). Nobody knows it; the user signs in another way or gets a new one set.
 */
export function randomPassword(): string {
  const characters = [
    ...Array.from({ length: 10 }, () => PASSWORD_DIGITS[randomInt(PASSWORD_DIGITS.length)]),
    ...Array.from({ length: 54 }, () => PASSWORD_LETTERS[randomInt(PASSWORD_LETTERS.length)]),
  ];
  for (let index = characters.length - 1; index > 0; index--) {
    const other = randomInt(index + 1);
    [characters[index], characters[other]] = [characters[other], characters[index]];
  }
  return characters.join("");
}
