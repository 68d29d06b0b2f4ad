/**
 * The execute endpoint's `"stream": true` answer: Server-Sent Events exactly as the spec and
 * decisions item 5 put them.
 *
 *   data: {"blockId": "...", "chunk": "..."}        text a block streams (emitChunk), by its producer;
 *                                                    with selectedOutputs, only the selected blocks',
 *                                                    and a selected block that does not stream sends
 *                                                    its selected value as one chunk when it finishes
 *   data: {"event": "done", "success", "output", "metadata": {"duration"}}   the run ended (a failed
 *                                                    block: success false, with error and failedBlock)
 *   data: {"event": "paused", ...}                   the run reached an approval and goes on
 *                                                    asynchronously: the paused answer's body
 *                                                    (paused-answer.ts), instead of done
 *   data: {"event": "error", "error": "..."}         the run could not end normally (its time limit, an
 *                                                    internal error), instead of done
 *   data: [DONE]
 *
 * A client that disconnects cancels the run, which is then recorded as cancelled.
 */
import { createSse } from "../../http/sse.ts";
import { requestLogger } from "../../http/logger.ts";
import { workflowLog } from "../workflow-errors.ts";
import type { ExecutionResult, TraceSpan, TriggerRequest } from "../core/context.ts";
import { runWorkflow } from "../runs/run-workflow.ts";
import type { AdmittedSync } from "../runs/lifecycle-answers.ts";
import { WORKER_LOST, type SyncLease } from "../runs/run-lease.ts";
import { endingOf, finishRun, recordUnexpectedEnd, type PreparedRun } from "../runs/run-lifecycle.ts";
import type { RecordingFileStore } from "../runs/storage-files.ts";
import type { CollectedOutcomes } from "../runs/collected-outcomes.ts";
import { handOverPausedRun } from "./paused-answer.ts";
import { executeAnswer } from "./run-response.ts";
import type { RunServices } from "./run-services.ts";
import { chunkText, selectedOutput, selectedValue, type SelectedOutput } from "./selected-outputs.ts";

/** What a streamed run needs. */
export interface StreamedRun {
  services: RunServices;
  run: AdmittedSync;
  prepared: PreparedRun;
  trigger: TriggerRequest;
  selected: SelectedOutput[] | null;
  files: RecordingFileStore;
  timeoutMs: number;
  request: Request;
  headers: Record<string, string>;
  /**
   * Called once the run is recorded, before the terminal frame, with the chunks the client was
   * sent (the chat keeps its conversation's turns with it). A failure here is logged, not sent.
   */
  onEnded?: (ending: { result: ExecutionResult; output: unknown; chunks: readonly string[] }) => Promise<void>;
  /**
   * The run's lease (run-lease.ts), or the cancellation watch of a run that holds none (a chat's):
   * the run stops if it is lost or cancelled (a lost run ends with an error frame, recording
   * nothing more), and the lease is released when the run ends.
   */
  lease?: SyncLease;
  /**
   * The run's block outcomes, collected as it goes and stored with its finish (API runs, for re-runs);
   * with an approval desk, the run may pause at an approval and is then handed to the async path.
   */
  outcomes?: CollectedOutcomes;
}

/** Starts the run and answers with its event stream (see the module comment). */
export function streamRun(options: StreamedRun): Response {
  const { services, run, prepared, trigger, selected, files } = options;
  const { response, writer } = createSse({ signal: options.request.signal, headers: options.headers });
  const selectedBlocks = new Set(selected?.map((selection) => selection.blockId));
  const streamedBlocks = new Set<string>();
  const sent: string[] = [];
  const send = (blockId: string, chunk: string) => {
    if (options.onEnded) sent.push(chunk);
    writer.send({ blockId, chunk });
  };

  const onChunk = (blockId: string, chunk: string) => {
    if (selected && !selectedBlocks.has(blockId)) return;
    streamedBlocks.add(blockId);
    send(blockId, chunk);
  };
  const onBlockComplete = (span: TraceSpan) => {
    if (!selected || span.status !== "success" || streamedBlocks.has(span.blockId)) return;
    for (const selection of selected) {
      if (selection.blockId !== span.blockId) continue;
      const value = selectedValue(selection, span.output);
      if (value !== undefined) send(span.blockId, chunkText(value));
    }
  };

  const work = async () => {
    try {
      const result = await runWorkflow({
        workflow: prepared.compiled, trigger, env: prepared.env, executionId: run.executionId, account: run.workflow.billingAccountId, trace: run.trace, timeoutMs: options.timeoutMs,
        signal: options.lease ? AbortSignal.any([writer.signal, options.lease.signal]) : writer.signal, services: { files }, onChunk, onBlockComplete,
        durable: options.outcomes,
      });
      if (options.lease?.lost) {
        writer.send({ event: "error", error: WORKER_LOST.message });
        return;
      }
      if (result.status === "parked" && options.outcomes) {
        const paused = await handOverPausedRun(services.call, run, result, options.outcomes);
        writer.send("status" in paused ? { event: "paused", ...(paused.body as Record<string, unknown>) } : { event: "error", error: paused.message });
        return;
      }
      const output = selected ? selectedOutput(selected, result.traceSpans) : result.output;
      await finishRun(services.call, run.executionId, { ...endingOf(result, files.files), response: executeAnswer(result, output), checkpoints: options.outcomes?.kept });
      await options.onEnded?.({ result, output, chunks: sent }).catch((error) => {
        requestLogger(workflowLog, options.request).error("stream_end_hook_failed", { executionId: run.executionId, error });
      });
      if (result.status === "timeout") {
        writer.send({ event: "error", error: result.error?.message ?? "the run ran past its time limit" });
      } else if (result.status !== "cancelled") {
        const failure = result.success ? {} : { error: result.error?.message ?? "the run failed", errorCode: result.error?.code ?? null, failedBlock: result.error?.block ?? null };
        writer.send({ event: "done", success: result.success, output: output ?? null, metadata: { duration: result.metadata.durationMs }, ...failure });
      }
    } catch (error) {
      requestLogger(workflowLog, options.request).error("stream_failed", { executionId: run.executionId, error });
      const recorded = await recordUnexpectedEnd(services.call, run.executionId, error);
      writer.send({ event: "error", error: recorded.message });
    } finally {
      options.lease?.release();
      writer.sendRaw("[DONE]");
      writer.close();
    }
  };
  void work();
  return response;
}
