/**
 * A failure the person at the keyboard can act on: one line saying what went wrong and how to fix
 * it. The runner prints `message` and `fix` and exits without a stack trace.
 */
export class PlatformError extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
    this.name = "PlatformError";
  }
}
