import { html } from "hono/html";
import type { Markup } from "../layout.ts";

/** A trace span's timing, as the engine records it (workflow_executions.trace_spans). */
export interface TimedSpan {
  name: string;
  type: string;
  status: string;
  durationMs: number;
  startTime?: string;
  endTime?: string;
  children?: TimedSpan[];
}

/** A duration with its unit: milliseconds below a second, seconds below a minute, then minutes. */
export function durationText(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Every span with its depth, parents before children, in recorded order. */
function flatten(spans: TimedSpan[], depth = 0, out: { span: TimedSpan; depth: number }[] = []): { span: TimedSpan; depth: number }[] {
  for (const span of spans) {
    out.push({ span, depth });
    if (span.children?.length) flatten(span.children, depth + 1, out);
  }
  return out;
}

/**
 * The run's spans as a timing waterfall: one bar a span, placed by its start and sized by its
 * duration against the whole run, so the slow block and the waits stand out. A span without a
 * start time (older records) follows the one before it.
 */
export function spanWaterfall(spans: TimedSpan[]): Markup {
  const rows = flatten(spans);
  const starts = rows.map(({ span }) => (span.startTime ? Date.parse(span.startTime) : Number.NaN));
  const known = starts.filter(Number.isFinite);
  const origin = known.length > 0 ? Math.min(...known) : 0;
  let cursor = 0;
  const placed = rows.map(({ span, depth }, index) => {
    const offset = Number.isFinite(starts[index]) ? starts[index] - origin : cursor;
    cursor = offset + span.durationMs;
    return { span, depth, offset };
  });
  const total = Math.max(1, ...placed.map(({ span, offset }) => offset + span.durationMs));
  return html`<table class="waterfall" aria-label="Timing of the run's spans"><thead><tr><th scope="col">Span</th><th scope="col">Duration</th><th scope="col">Timeline (0 to ${durationText(total)})</th></tr></thead><tbody>
${placed.map(({ span, depth, offset }) => html`<tr class="${span.status}"><td style="padding-left:${0.4 + depth}rem">${span.name} <small>${span.type}</small></td><td>${durationText(span.durationMs)}</td><td class="bar-cell"><span class="bar" style="margin-left:${((offset / total) * 100).toFixed(2)}%;width:${Math.max(0.5, (span.durationMs / total) * 100).toFixed(2)}%" title="starts at ${durationText(offset)}, lasts ${durationText(span.durationMs)}"></span></td></tr>`)}
</tbody></table>`;
}
