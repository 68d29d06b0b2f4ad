import { invalid } from "../actions.ts";

/** A run's statuses and triggers, as the workflow_run_status and workflow_trigger enums hold them. */
export const RUN_STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export const RUN_TRIGGERS = ["manual", "api", "webhook", "schedule", "chat"] as const;
/** Longest text searched for in runs' errors. */
const TEXT_CHARACTERS = 200;

/** The runs' search on a workflow's page, as its query carries it. */
export interface RunFilter {
  status: string | null;
  trigger: string | null;
  /** datetime-local values, read as UTC (the dashboard shows times as Postgres sends them). */
  from: string | null;
  to: string | null;
  text: string | null;
  active: boolean;
}

const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$/;

/** The search read and checked from a page's query; a value that is not one is refused in words. */
export function runFilterOf(query: Record<string, string>): RunFilter {
  const pick = (name: string) => (query[name] ? query[name].trim() || null : null);
  const [status, trigger, from, to, text] = ["status", "trigger", "from", "to", "text"].map(pick);
  if (status && !(RUN_STATUSES as readonly string[]).includes(status)) throw invalid(`A run's status is one of ${RUN_STATUSES.join(", ")}`);
  if (trigger && !(RUN_TRIGGERS as readonly string[]).includes(trigger)) throw invalid(`A run's trigger is one of ${RUN_TRIGGERS.join(", ")}`);
  for (const [name, value] of [["From", from], ["To", to]] as const) {
    if (value && !(LOCAL_TIME.test(value) && Number.isFinite(Date.parse(`${value}Z`)))) throw invalid(`${name} must be a date and time (YYYY-MM-DDTHH:MM)`);
  }
  if (from && to && Date.parse(`${from}Z`) > Date.parse(`${to}Z`)) throw invalid("From must not be after To");
  if (text && text.length > TEXT_CHARACTERS) throw invalid(`Search for at most ${TEXT_CHARACTERS} characters`);
  return { status, trigger, from, to, text, active: Boolean(status || trigger || from || to || text) };
}

/** The search as PostgREST filters on workflow_executions, each value encoded. */
export function runFilterQuery(filter: RunFilter): string {
  const parts: string[] = [];
  if (filter.status) parts.push(`status=eq.${filter.status}`);
  if (filter.trigger) parts.push(`trigger=eq.${filter.trigger}`);
  if (filter.from) parts.push(`created_at=gte.${encodeURIComponent(`${filter.from}Z`)}`);
  if (filter.to) parts.push(`created_at=lte.${encodeURIComponent(`${filter.to}Z`)}`);
  // PostgREST's ilike takes * as its wildcard; a * typed by the person is matched as any text too.
  if (filter.text) parts.push(`error_message=ilike.${encodeURIComponent(`*${filter.text}*`)}`);
  return parts.map((part) => `&${part}`).join("");
}
