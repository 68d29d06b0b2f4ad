/** The one table `npm run bench` ends with, and the same figures as bench/results.json. */
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { ratio, type BenchFigure } from "./bench-support.ts";

/** Where the machine-readable copy of the last run's table goes (not committed: it is per machine). */
export const RESULTS_FILE = "bench/results.json";

/** The machine a run measured on, printed above the table and stored beside the figures. */
export function describeMachine(): { cores: number; cpu: string; memoryGiB: number; node: string } {
  return { cores: cpus().length, cpu: cpus()[0]?.model ?? "unknown CPU", memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
}

/** A figure in at most four significant digits, so the table's columns stay narrow. */
function formatNumber(value: number): string {
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** The table as lines of text: bench, metric, scale, ours, baseline, ratio, goal. */
export function formatTable(figures: readonly BenchFigure[]): string[] {
  const rows = figures.map((figure) => {
    const measured = ratio(figure);
    return [
      figure.bench,
      figure.metric,
      figure.scale ?? "",
      `${formatNumber(figure.value)} ${figure.unit}`,
      figure.baseline ? `${formatNumber(figure.baseline.value)} ${figure.unit} (${figure.baseline.name})` : "–",
      measured === null ? "–" : `${measured.toFixed(2)}×`,
      figure.goal ? `${figure.goal.met ? "✓" : "✗"} ${figure.goal.text}` : "·",
    ];
  });
  const header = ["bench", "metric", "scale", "ours", "baseline (same run)", "ratio", "goal"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column])).join(" │ ").trimEnd();
  return [line(header), widths.map((width) => "─".repeat(width)).join("─┼─"), ...rows.map(line)];
}

/** Writes the figures with the machine and the time to bench/results.json under `root`. */
export function writeResults(root: string, figures: readonly BenchFigure[]): void {
  const body = { measuredAt: new Date().toISOString(), machine: describeMachine(), figures: figures.map((figure) => ({ ...figure, ratio: ratio(figure) })) };
  writeFileSync(`${root}/${RESULTS_FILE}`, `${JSON.stringify(body, null, 2)}\n`);
}
