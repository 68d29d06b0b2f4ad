/**
 * The gamification API's one logger: a JSON line per event on stderr, which the functions host
 * and the hosted edge runtime both collect. Only unexpected failures are logged; a request that
 * goes as designed (including a 4xx) leaves no line.
 */
export function logEvent(level: "error" | "warn", message: string, fields: Record<string, unknown> = {}): void {
  console.error(JSON.stringify({ level, service: "gamification", message, ...fields, at: new Date().toISOString() }));
}
