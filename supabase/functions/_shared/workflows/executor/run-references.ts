/**
 * Answers references from a run's state, for the resolvers compiled from block configs:
 * `<block.path>` from the frames (the reader's own frame first, then the frames around it),
 * `<loop.*>` / `<parallel.*>` / `<containername.*>` from the enclosing iterations, `<variable.x>`
 * from the workflow variables and `{{NAME}}` from the environment. Anything that finds nothing fails
 * with the reference named; a block that was skipped reads as null.
 */
import { WorkflowError } from "../core/errors.ts";
import { formatPath, getPath, type EnvToken, type ReferenceToken } from "../core/references.ts";
import type { TokenSource } from "../core/resolver.ts";
import type { Frame, Iteration, Run } from "./run-state.ts";

function referenceError(token: ReferenceToken, why: string): WorkflowError {
  return new WorkflowError("REFERENCE_NOT_FOUND", `reference ${token.raw} failed: ${why}`);
}

/** Walks the rest of a reference's path, or throws naming the step that finds nothing. */
function walkOrThrow(token: ReferenceToken, value: unknown, from: number, owner: string): unknown {
  if (from >= token.path.length) return value;
  const lookup = getPath(value, token.path, from);
  if (lookup.found) return lookup.value;
  const missing = formatPath(token.path.slice(0, lookup.depth + 1));
  const offered = lookup.available.length > 0 ? ` (it has ${lookup.available.join(", ")})` : "";
  throw referenceError(token, `${owner} has no "${missing}"${offered}`);
}

function iterationValue(iteration: Iteration, token: ReferenceToken): unknown {
  const field = token.path[0];
  const owner = `${iteration.kind} "${iteration.container.identity.name}"`;
  if (field === "index") return walkOrThrow(token, iteration.index, 1, `${owner}'s index`);
  if (field === "item" || field === "items") {
    if (iteration.items === null) throw referenceError(token, `${owner} repeats a count, so it has no items`);
    return walkOrThrow(token, field === "item" ? iteration.item : iteration.items, 1, `${owner}'s ${field}`);
  }
  throw referenceError(token, `${owner} offers only index, item and items`);
}

function resolveReference(run: Run, frame: Frame, token: ReferenceToken): unknown {
  const head = token.head;
  if (head === "loop" || head === "parallel") {
    for (let current: Frame | null = frame; current; current = current.parent) {
      if (current.iteration?.kind === head) return iterationValue(current.iteration, token);
    }
    throw referenceError(token, `there is no enclosing ${head}`);
  }
  if (head === "variable") {
    const name = String(token.path[0]);
    if (!run.variables.has(name)) throw referenceError(token, `no Variables block has set "${name}" yet`);
    return walkOrThrow(token, run.variables.get(name), 1, `variable "${name}"`);
  }
  const target = run.workflow.byName.get(head) ?? (head === "api" ? run.workflow.apiTrigger : null);
  if (!target) throw referenceError(token, `there is no block named "${head}"`);
  for (let current: Frame | null = frame; current; current = current.parent) {
    if (current.iteration?.container === target) return iterationValue(current.iteration, token);
  }
  for (let current: Frame | null = frame; current; current = current.parent) {
    if (current.scopeId !== target.scopeId) continue;
    const status = current.status.get(target.id);
    if (status === "success" || status === "error") return walkOrThrow(token, current.outputs.get(target.id), 0, `the output of "${target.identity.name}"`);
    if (status === "skipped") return null;
    throw referenceError(token, `"${target.identity.name}" has not run yet`);
  }
  throw referenceError(token, `"${target.identity.name}" is inside a loop or parallel this block is not in`);
}

/** The reference answers for blocks running in `frame` (made once per frame). */
export function tokensOf(run: Run, frame: Frame): TokenSource {
  frame.tokens ??= {
    ref: (token: ReferenceToken) => resolveReference(run, frame, token),
    env: (token: EnvToken) => {
      if (!Object.hasOwn(run.env, token.name)) throw new WorkflowError("ENV_VAR_NOT_FOUND", `environment variable {{${token.name}}} is not set in this workspace`);
      return run.env[token.name];
    },
  };
  return frame.tokens;
}
