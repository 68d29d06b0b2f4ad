import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "platform/**/*.test.ts", "supabase/functions/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: end-to-end files share one stack, so a little parallelism is enough.
    maxWorkers: 2,
  },
});
