/**
 * The run's cancellation tree. The run, each scope (top level, iteration, branch) and each block in
 * flight hold a node; aborting a node aborts everything under it. Nodes are plain objects: no
 * EventTarget listeners pile up on a shared AbortSignal (a parallel of 20 branches would otherwise
 * hang 20 listeners on one signal), and blocks that finish synchronously never allocate an
 * AbortController at all. Handlers still get a real AbortSignal when they ask for one.
 */

/** Anything that can be told to abort: a Cancellation or an AbortController. */
interface Abortable {
  abort(reason: unknown): void;
}

/** One node of the tree. */
export class Cancellation implements Abortable {
  private stopped = false;
  private why: unknown = undefined;
  private readonly children = new Set<Abortable>();

  /** A node under `parent` (aborted at once if the parent already is). */
  constructor(private readonly parent: Cancellation | null = null) {
    parent?.attach(this);
  }

  /** True once aborted. */
  get aborted(): boolean {
    return this.stopped;
  }

  /** Why it was aborted (an error, or a marker such as "a Response answered"). */
  get reason(): unknown {
    return this.why;
  }

  /** Aborts this node and everything under it; later calls are ignored. */
  abort(reason: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.why = reason;
    const children = [...this.children];
    this.children.clear();
    for (const child of children) child.abort(reason);
    this.parent?.detach(this);
  }

  /** An AbortController that this node aborts; hand it back with `detach` when done. */
  controller(): AbortController {
    const controller = new AbortController();
    this.attach(controller);
    return controller;
  }

  /** Adds something to abort with this node (aborted at once when the node already is). */
  attach(child: Abortable): void {
    if (this.stopped) child.abort(this.why);
    else this.children.add(child);
  }

  /** Stops aborting `child` with this node (it has finished). */
  detach(child: Abortable): void {
    this.children.delete(child);
  }

  /** Leaves the tree: called when this node's work is over, so the parent forgets it. */
  release(): void {
    this.parent?.detach(this);
  }
}
