/** One unmet rule of the password policy. */
export interface PasswordProblem {
  code: "too_short" | "too_long" | "missing_lowercase" | "missing_uppercase" | "missing_digit" | "surrounding_whitespace" | "control_characters";
  message: string;
}

/** Shortest password an admin may set (stricter than Auth's own minimum of 6). */
export const MIN_PASSWORD_LENGTH = 10;
/** bcrypt ignores everything after 72 bytes, so longer passwords would be silently truncated. */
export const MAX_PASSWORD_BYTES = 72;

/**
 * Every rule a new password breaks (empty when it is acceptable): at least 10 characters, at most
 * 72 bytes in UTF-8, a lower-case letter, an upper-case letter and a digit, no leading or trailing
 * whitespace (easy to type by accident, impossible to see), and no control character (NUL, tab,
 * line break, escape, DEL, C1: invisible, hard or impossible to type at sign-in, and a NUL cuts
 * the password short in C bcrypt implementations).
 */
export function passwordProblems(password: string): PasswordProblem[] {
  const problems: PasswordProblem[] = [];
  if ([...password].length < MIN_PASSWORD_LENGTH) problems.push({ code: "too_short", message: `Use at least ${MIN_PASSWORD_LENGTH} characters` });
  if (new TextEncoder().encode(password).length > MAX_PASSWORD_BYTES) problems.push({ code: "too_long", message: `Use at most ${MAX_PASSWORD_BYTES} bytes` });
  if (!/\p{Ll}/u.test(password)) problems.push({ code: "missing_lowercase", message: "Include a lower-case letter" });
  if (!/\p{Lu}/u.test(password)) problems.push({ code: "missing_uppercase", message: "Include an upper-case letter" });
  if (!/\p{Nd}/u.test(password)) problems.push({ code: "missing_digit", message: "Include a digit" });
  if (password !== password.trim()) problems.push({ code: "surrounding_whitespace", message: "Do not start or end with whitespace" });
  if (/\p{Cc}/u.test(password)) problems.push({ code: "control_characters", message: "Do not use control characters (tabs, line breaks, invisible codes)" });
  return problems;
}
