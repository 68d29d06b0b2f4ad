/**
 * Chat trigger: a run started by a chat deployment's message (or a manual run given one) reads the
 * message, the conversation id and the conversation's earlier turns: `<chat.message>`,
 * `<chat.conversationId>`, `<chat.history>` when the block is named Chat.
 */
import type { BlockOutput } from "../../core/context.ts";
import { asRecord } from "../../core/values.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler } from "../../core/block-handler.ts";

/** One earlier turn of a conversation, oldest first. */
export interface ChatTurn {
  role: "user" | "assistant";
  content: string;
}

function turns(value: unknown): ChatTurn[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry) => {
    const turn = asRecord(entry);
    return turn && (turn.role === "user" || turn.role === "assistant") && typeof turn.content === "string" ? [{ role: turn.role, content: turn.content }] : [];
  });
}

/** Chat trigger: the message, its conversation and the conversation so far. */
export const chatTriggerHandler: BlockHandler<Record<string, never>> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  execute(run): BlockOutput {
    const input = asRecord(run.trigger?.input) ?? {};
    return {
      message: typeof input.message === "string" ? input.message : "",
      conversationId: typeof input.conversationId === "string" ? input.conversationId : run.executionId,
      history: turns(input.history),
    };
  },
};
