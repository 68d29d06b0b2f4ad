/** Severity of a log line. */
export type LogLevel = "info" | "warn" | "error";

/**
 * The portal functions' one logger: a JSON line per event on stdout, which the local functions
 * host and Supabase's log explorer both keep. Never log tokens, passwords or e-mail bodies.
 */
export function logEvent(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ level, event, time: new Date().toISOString(), ...fields }));
}
