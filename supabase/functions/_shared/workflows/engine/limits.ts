/** Caps of loops and parallels (decisions, "Executor semantics"); going past one fails loudly. */

/** Most iterations of a loop, and most branches of a parallel. */
export const MAX_ITERATIONS = 1000;

/** Most parallel branches in flight at once; more branches run in a sliding window. */
export const MAX_CONCURRENT_BRANCHES = 20;
