/** The `chat_trigger` block type: starts a run from a message to the workflow's chat deployment. */
import { z } from "zod";
import { defineBlock } from "../block-spec.ts";

/** Chat trigger: no settings of its own (the chat deployment holds them). */
export const chatTriggerSpec = defineBlock({
  type: "chat_trigger",
  category: "trigger",
  summary: "Starts a run from a message to the workflow's chat deployment: <chat.message>, <chat.conversationId>, <chat.history>.",
  configSchema: z.object({}).strict(),
  rules: [],
});
