/** Prints one progress line per slow step, with how long it took, so a cold start is never silent. */
export async function step<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  process.stdout.write(`  • ${label}…`);
  try {
    const result = await work();
    process.stdout.write(` done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    return result;
  } catch (error) {
    process.stdout.write(" failed\n");
    throw error;
  }
}
