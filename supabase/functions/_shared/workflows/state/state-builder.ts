/**
 * A terse way to write workflow states in code (tests, benchmarks, seeds), producing exactly the
 * JSON the editor saves. It does not validate: the database does, when the state is saved (or
 * through `validate_workflow_state`).
 */
import type { LoopSettings, ParallelSettings, WorkflowState } from "./state-schema.ts";

/** Options of one block. */
export interface BlockOptions {
  /** Defaults to the id. */
  name?: string;
  enabled?: boolean;
}

/** Builds a state block by block and edge by edge. */
export class WorkflowBuilder {
  private readonly state: WorkflowState = { blocks: {}, edges: [], loops: {}, parallels: {} };

  /** Adds a block. */
  block(id: string, type: string, config: Record<string, unknown> = {}, options: BlockOptions = {}): this {
    this.state.blocks[id] = { id, type, name: options.name ?? id, config, enabled: options.enabled ?? true };
    return this;
  }

  /** Connects two blocks; `handle` picks the source port (`error`, `condition-<id>`, ...). */
  edge(source: string, target: string, handle?: string): this {
    this.state.edges.push({ id: `${source}->${target}${handle ? `:${handle}` : ""}`, source, target, ...(handle ? { sourceHandle: handle } : {}) });
    return this;
  }

  /** Connects each block to the next. */
  chain(...ids: string[]): this {
    for (let index = 1; index < ids.length; index++) this.edge(ids[index - 1], ids[index]);
    return this;
  }

  /** Adds a loop block with its settings; connect its body with `edge(id, first, "loop-start")`. */
  loop(id: string, settings: LoopSettings, options: BlockOptions = {}): this {
    this.state.loops[id] = settings;
    return this.block(id, "loop", {}, options);
  }

  /** Adds a parallel block with its settings; connect its body with `edge(id, first, "parallel-start")`. */
  parallel(id: string, settings: ParallelSettings, options: BlockOptions = {}): this {
    this.state.parallels[id] = settings;
    return this.block(id, "parallel", {}, options);
  }

  /** The state built so far (a fresh copy each time). */
  build(): WorkflowState {
    return structuredClone(this.state);
  }
}
