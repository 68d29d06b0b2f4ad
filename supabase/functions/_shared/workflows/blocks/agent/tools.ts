/**
 * An Agent's tools: API and vector-store blocks the model may call. Each tool's `config` holds the
 * fields its author fixed (a vector tool's store and collection, an API tool's URL and
 * credentials); the model fills in the rest of that block type's inputs, described to it as the
 * tool's JSON Schema parameters. A call runs the block's own handler with the merged config; what
 * it returns (or why it failed) goes back to the model, and into the Agent's `toolCalls`.
 */
import type { BlockOutput } from "../../core/context.ts";
import { messageOf, WorkflowError } from "../../core/errors.ts";
import type { ToolCall, ToolSpec } from "../../outbound/providers/chat.ts";
import { apiConfigSchema, HTTP_METHODS, type ApiInput } from "../api/config.ts";
import { apiHandler } from "../api/handler.ts";
import { apiSecrets } from "../api/request.ts";
import type { BlockRun } from "../../core/block-handler.ts";
import { vectordbConfigSchema, type VectordbInput } from "../vectordb/config.ts";
import { runVectorTool } from "../vectordb/handler.ts";
import type { AgentTool } from "./config.ts";

/** What a tool answer may hold before it is cut for the model. */
const MAX_TOOL_RESULT_CHARS = 20_000;

type Schema = Record<string, unknown>;

const keyValues: Schema = { type: "object", additionalProperties: { type: ["string", "number", "boolean"] } };

/** The inputs of an API block the model may fill, by field. */
const API_PARAMETERS: Record<string, Schema> = {
  url: { type: "string", description: "Absolute http(s) URL; {name} placeholders are filled from pathParams" },
  method: { type: "string", enum: [...HTTP_METHODS] },
  pathParams: { ...keyValues, description: "Values for {name} placeholders in the URL" },
  query: { ...keyValues, description: "Query parameters" },
  headers: { ...keyValues, description: "Request headers" },
  body: { type: "object", description: "JSON body (POST, PUT, PATCH)" },
};

const pointId: Schema = { type: ["integer", "string"], description: "A whole number or a UUID" };

/** The inputs of each vector tool the model may fill. */
const VECTOR_PARAMETERS: Record<VectordbInput["operation"], Record<string, Schema>> = {
  vectordb_upsert_points: {
    points: { type: "array", items: { type: "object", properties: { id: pointId, vector: { type: "array", items: { type: "number" } }, payload: { type: "object" } }, required: ["id", "vector"] } },
  },
  vectordb_search_vector: {
    vector: { type: "array", items: { type: "number" } },
    limit: { type: "integer", minimum: 1, maximum: 1000 },
    filter: { type: "object", description: "A Qdrant filter: {must, should, must_not} of {key, match} or {key, range}" },
  },
  vectordb_fetch_points: { ids: { type: "array", items: pointId } },
};

const REQUIRED: Record<string, readonly string[]> = {
  api: ["url"],
  vectordb_upsert_points: ["points"],
  vectordb_search_vector: ["vector"],
  vectordb_fetch_points: ["ids"],
};

/** Every field the model may set for this tool, with its schema (fields the config fixes are left out). */
function parametersOf(tool: AgentTool): Record<string, Schema> {
  const all = tool.type === "api" ? API_PARAMETERS : VECTOR_PARAMETERS[tool.config.operation as VectordbInput["operation"]] ?? {};
  return Object.fromEntries(Object.entries(all).filter(([field]) => !(field in tool.config)));
}

/** The tool as the model sees it. */
export function toolSpec(tool: AgentTool): ToolSpec {
  const properties = parametersOf(tool);
  const required = (REQUIRED[tool.type === "api" ? "api" : String(tool.config.operation)] ?? []).filter((field) => field in properties);
  const fallback = tool.type === "api" ? `Sends an HTTP request${typeof tool.config.url === "string" ? ` to ${tool.config.url}` : ""}` : `Vector store: ${String(tool.config.operation).replace("vectordb_", "").replaceAll("_", " ")}`;
  return { name: tool.name, description: tool.description || fallback, parameters: { type: "object", properties, required } };
}

/** Checks the tools before any model call: a vector tool must name its operation. */
export function checkTools(tools: readonly AgentTool[]): void {
  for (const tool of tools) {
    const operation = tool.config.operation;
    if (tool.type === "vectordb" && (typeof operation !== "string" || !Object.hasOwn(VECTOR_PARAMETERS, operation))) {
      throw new WorkflowError("BLOCK_FAILED", `tool "${tool.name}" needs config.operation: vectordb_upsert_points, vectordb_search_vector or vectordb_fetch_points`);
    }
  }
}

/** Credentials in the tools' fixed configs, masked like the Agent's own key. */
export function toolSecrets(tools: readonly AgentTool[] | undefined): string[] {
  return (tools ?? []).flatMap((tool) => {
    if (tool.type === "api") return apiSecrets(tool.config as unknown as ApiInput);
    const key = tool.config.apiKey;
    return typeof key === "string" && key !== "" ? [key] : [];
  });
}

/** A tool call as the Agent reports it. */
export interface ToolCallRecord {
  name: string;
  arguments: Record<string, unknown>;
  /** What the tool returned (success). */
  result?: BlockOutput;
  /** Why it failed. */
  error?: string;
  code?: string;
  durationMs: number;
}

/** What the model is told: the tool's answer, or its error, as JSON text. */
export interface ToolOutcome {
  record: ToolCallRecord;
  content: string;
  isError: boolean;
}

function forModel(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > MAX_TOOL_RESULT_CHARS ? `${text.slice(0, MAX_TOOL_RESULT_CHARS)}… (cut at ${MAX_TOOL_RESULT_CHARS} characters)` : text;
}

/** Runs one call the model made, through the tool block's own handler. */
export async function runToolCall(run: BlockRun<unknown>, tools: readonly AgentTool[], call: ToolCall): Promise<ToolOutcome> {
  const started = Date.now();
  const failed = (message: string, code: string): ToolOutcome => ({
    record: { name: call.name, arguments: call.arguments, error: message, code, durationMs: Date.now() - started },
    content: forModel({ error: message, code }),
    isError: true,
  });
  const tool = tools.find((candidate) => candidate.name === call.name);
  if (!tool) return failed(`there is no tool named "${call.name}"`, "UNKNOWN_TOOL");
  if (call.argumentsError) return failed(call.argumentsError, "INVALID_ARGUMENTS");
  // Fields the config fixes cannot be changed by the model.
  const allowed = parametersOf(tool);
  const input = { ...tool.config, ...Object.fromEntries(Object.entries(call.arguments).filter(([field]) => field in allowed)) };
  const schema = tool.type === "api" ? apiConfigSchema : vectordbConfigSchema;
  const checked = schema.safeParse(input);
  if (!checked.success) return failed(checked.error.issues.map((issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`).join("; "), "INVALID_ARGUMENTS");
  const toolRun = { ...run, block: { id: run.block.id, name: `${run.block.name} / ${tool.name}`, type: tool.type }, input: checked.data, emitChunk: () => {} };
  try {
    const output = tool.type === "api" ? await apiHandler.execute(toolRun as BlockRun<ApiInput>) : await runVectorTool(toolRun as BlockRun<VectordbInput>);
    const { attempts: _attempts, ...shown } = output;
    return { record: { name: tool.name, arguments: call.arguments, result: output, durationMs: Date.now() - started }, content: forModel(shown), isError: false };
  } catch (error) {
    // The Agent's own time limit or the run's end is not the tool's failure.
    if (run.signal.aborted) throw run.signal.reason;
    return failed(messageOf(error), error instanceof WorkflowError ? error.code : "BLOCK_FAILED");
  }
}
