/**
 * The sandbox corpus, in one place: hostile user code (host access, endless loops, memory bombs,
 * prototype tricks, huge outputs) run the two ways production runs it, through the real stack:
 * - as Function code, Condition expressions and Router patterns in manual runs of the `api`
 *   function (the pool of QuickJS threads);
 * - through the `workflow-sandbox` function, where hosted Supabase runs it (no Web Workers).
 * Each entry must end the way docs/workflow-limits.md says (its error code, or a value that shows
 * nothing of the host), quickly, with a small answer that holds none of the stack's secrets; and
 * afterwards nothing of it is left behind: no global or prototype change reaches the next run or
 * the host, and the API answers as before.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowStateInput } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "../workflows/factories.ts";
import { liftLimits } from "../workflows/logs-helpers.ts";

/** How an entry must end: one of these error codes, or a value the check accepts. */
type Outcome = { fails: string[] } | { value: (value: unknown) => boolean };

interface Entry {
  name: string;
  code: string;
  outcome: Outcome;
}

/** Whether a value (as JSON) names none of the host's objects or paths. */
const hostFree = (value: unknown) => !/process|Deno|require|WebAssembly|\/work\/|file:\/\/|node:|SUPABASE_/.test(JSON.stringify(value) ?? "");

/** Function code, by what it tries. Loops get 1.5 s (the block's timeoutMs below). */
const CORPUS: Record<string, Entry[]> = {
  "host access": [
    { name: "process.env", code: "return process.env;", outcome: { fails: ["BLOCK_FAILED"] } },
    { name: "require('child_process')", code: "return require('child_process').execSync('id').toString();", outcome: { fails: ["BLOCK_FAILED"] } },
    { name: "Deno.readTextFile", code: "return await Deno.readTextFile('/etc/passwd');", outcome: { fails: ["BLOCK_FAILED"] } },
    { name: "fetch to the metadata address", code: "return await (await fetch('http://169.254.169.254/latest/meta-data/')).text();", outcome: { fails: ["BLOCK_FAILED"] } },
    { name: "a dynamic import", code: "return await import('node:fs');", outcome: { fails: ["BLOCK_FAILED"] } },
    { name: "the Function constructor's global", code: "const g = (function () {}).constructor('return this')(); return Object.getOwnPropertyNames(g);", outcome: { value: hostFree } },
    { name: "a constructor chain from a value", code: "return __refs.constructor.constructor('return typeof process + typeof Deno + typeof require')();", outcome: { value: (value) => value === "undefinedundefinedundefined" } },
    { name: "an error's stack", code: "try { null.x; } catch (error) { return String(error.stack); }", outcome: { value: hostFree } },
    { name: "Atomics.wait on shared memory", code: "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000); return 1;", outcome: { fails: ["BLOCK_FAILED", "SANDBOX_TIMEOUT"] } },
    { name: "timers", code: "return await new Promise((resolve) => setTimeout(resolve, 1));", outcome: { fails: ["BLOCK_FAILED"] } },
  ],
  "endless loops": [
    { name: "while (true)", code: "while (true) {}", outcome: { fails: ["SANDBOX_TIMEOUT"] } },
    { name: "a microtask loop", code: "for (;;) await null;", outcome: { fails: ["SANDBOX_TIMEOUT"] } },
    { name: "catastrophic regex backtracking", code: "return /^(a+)+$/.test('a'.repeat(40) + 'b');", outcome: { fails: ["SANDBOX_TIMEOUT"] } },
    { name: "a loop in a catch that swallows the interrupt", code: "for (;;) { try { while (true) {} } catch (error) {} }", outcome: { fails: ["SANDBOX_TIMEOUT"] } },
    { name: "a promise that never settles", code: "await new Promise(() => {});", outcome: { fails: ["BLOCK_FAILED", "SANDBOX_TIMEOUT"] } },
    { name: "runaway recursion", code: "const f = () => f(); return f();", outcome: { fails: ["BLOCK_FAILED"] } },
  ],
  "memory bombs": [
    // Not strings: QuickJS builds repeated and concatenated strings as ropes, which cost almost
    // nothing. On a loaded machine the time limit may come first; either stops it.
    { name: "an array of objects that grows forever", code: "const items = []; while (true) items.push({ n: items.length, m: [items.length] });", outcome: { fails: ["SANDBOX_MEMORY_LIMIT", "SANDBOX_TIMEOUT"] } },
    { name: "a string that doubles", code: "let s = 'x'; while (true) s += s;", outcome: { fails: ["SANDBOX_MEMORY_LIMIT", "BLOCK_FAILED"] } },
    { name: "a 2 GB ArrayBuffer", code: "return new ArrayBuffer(2 ** 31).byteLength;", outcome: { fails: ["SANDBOX_MEMORY_LIMIT", "BLOCK_FAILED"] } },
    { name: "a huge repeat", code: "return 'x'.repeat(2 ** 30).length;", outcome: { fails: ["SANDBOX_MEMORY_LIMIT", "BLOCK_FAILED"] } },
    { name: "typed arrays that grow forever", code: "const items = []; while (true) items.push(new Float64Array(8192));", outcome: { fails: ["SANDBOX_MEMORY_LIMIT"] } },
    { name: "an object with endless keys", code: "const o = {}; for (let i = 0; ; i++) o['k' + i] = i;", outcome: { fails: ["SANDBOX_MEMORY_LIMIT", "SANDBOX_TIMEOUT"] } },
  ],
  "prototype tricks": [
    { name: "polluting Object.prototype", code: "Object.prototype.polluted = true; Array.prototype.push = () => 0; return { set: true };", outcome: { value: (value) => JSON.stringify(value) === '{"set":true}' } },
    { name: "an output with __proto__ and constructor keys", code: "return JSON.parse('{\"__proto__\": {\"polluted\": true}, \"constructor\": {\"prototype\": {\"polluted\": true}}, \"a\": 1}');", outcome: { value: (value) => (value as { a?: number }).a === 1 } },
    { name: "a toJSON that throws", code: "return { toJSON() { throw new Error('no'); } };", outcome: { fails: ["BLOCK_FAILED"] } },
    { name: "a getter that loops", code: "return { get x() { while (true) {} } };", outcome: { fails: ["SANDBOX_TIMEOUT"] } },
    { name: "a Proxy result", code: "return new Proxy({}, { ownKeys() { while (true) {} } });", outcome: { fails: ["SANDBOX_TIMEOUT", "BLOCK_FAILED"] } },
    { name: "a cyclic result", code: "const a = {}; a.self = a; return a;", outcome: { fails: ["BLOCK_FAILED"] } },
  ],
  "huge outputs": [
    { name: "a 5 MB string", code: "return 'x'.repeat(5 * 1024 * 1024);", outcome: { fails: ["OUTPUT_TOO_LARGE"] } },
    // Copying a million values out can outlast the time limit on a loaded machine: the thread is then replaced.
    { name: "a million small values", code: "return Array.from({ length: 1_000_000 }, (_, i) => i);", outcome: { fails: ["OUTPUT_TOO_LARGE", "SANDBOX_MEMORY_LIMIT", "SANDBOX_TIMEOUT"] } },
    { name: "console output without end", code: "for (let i = 0; i < 1e7; i++) console.log('x'.repeat(1000));", outcome: { fails: ["SANDBOX_TIMEOUT", "SANDBOX_MEMORY_LIMIT", "OUTPUT_TOO_LARGE", "BLOCK_FAILED"] } },
    { name: "nesting 100,000 deep", code: "let v = []; for (let i = 0; i < 100000; i++) v = [v]; return v;", outcome: { fails: ["BLOCK_FAILED", "OUTPUT_TOO_LARGE"] } },
  ],
};

/** Condition expressions and Router patterns are user code too. */
const EXPRESSIONS: Entry[] = [
  { name: "a Condition that loops", code: "(() => { while (true) {} })()", outcome: { fails: ["SANDBOX_TIMEOUT"] } },
  { name: "a Condition that reads the host", code: "typeof process !== 'undefined' && process.exit(1)", outcome: { value: () => true } },
  { name: "a Condition that allocates without end", code: "(() => { let s = 'x'; while (true) s += s; })()", outcome: { fails: ["SANDBOX_MEMORY_LIMIT", "BLOCK_FAILED"] } },
];

/** What the sandbox says of a call that waited out its whole deadline before it could start. */
const NO_TIME_LEFT = "no time left to run";
/**
 * How many times a call that waited out its whole deadline for a free engine, and so ran nothing,
 * is made: on a loaded machine two in a row happen, and the test is about what the code does once
 * it runs, not about how soon an engine frees up.
 */
const ATTEMPTS_WHILE_NOTHING_RAN = 5;

/** Makes `call` again, up to ATTEMPTS_WHILE_NOTHING_RAN times in all, while its answer says nothing ran. */
async function callUntilItRan<T>(call: () => Promise<T>, answerText: (answer: T) => string): Promise<T> {
  let answer = await call();
  for (let attempt = 1; attempt < ATTEMPTS_WHILE_NOTHING_RAN && answerText(answer).includes(NO_TIME_LEFT); attempt += 1) answer = await call();
  return answer;
}

/** Strings the answers must never hold: the stack's keys and secret. */
const SECRETS = [env.serviceRoleKey, env.secretKey, env.jwtSecret];
/** An answer's size bound: the budgets cut outputs at 4 MiB and traces well below. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;

let workspace: TestWorkspace;
const send = fetchFrom(simulatedClientAddress());

/** A manual run of `state`; status, parsed body, size and seconds. */
async function manualRun(name: string, state: WorkflowStateInput, timeoutMs?: number): Promise<{ status: number; body: Record<string, unknown>; text: string; seconds: number }> {
  const id = await createWorkflow(workspace.members.editor, workspace.id, name, state);
  const started = performance.now();
  const response = await send(`${env.url}/api/workflows/${id}/run`, {
    method: "POST",
    headers: { authorization: `Bearer ${workspace.members.editor.accessToken}`, "content-type": "application/json" },
    body: JSON.stringify({ input: { text: "order-1" }, ...(timeoutMs ? { timeoutMs } : {}) }),
  });
  const text = await response.text();
  return { status: response.status, text, body: text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {}, seconds: (performance.now() - started) / 1000 };
}

const functionState = (code: string) =>
  new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" }).block("work", "function", { code, timeoutMs: 1_500 }, { name: "Work" }).chain("start", "work").build();

/** Why a run's answer breaks the entry's outcome, or null. */
function problemWith(entry: Entry, answer: { status: number; body: Record<string, unknown>; text: string; seconds: number }, output: (body: Record<string, unknown>) => unknown): string | null {
  if (answer.text.length > MAX_ANSWER_CHARS) return `answered ${answer.text.length} characters`;
  if (SECRETS.some((secret) => answer.text.includes(secret))) return "answered with one of the stack's secrets";
  if (answer.seconds > 20) return `took ${answer.seconds.toFixed(1)} s`;
  if ("fails" in entry.outcome) {
    const code = answer.body.errorCode as string | undefined;
    return answer.status === 500 && code !== undefined && entry.outcome.fails.includes(code) ? null : `answered ${answer.status} ${answer.text.slice(0, 300)}, expected a failure with ${entry.outcome.fails.join(" or ")}`;
  }
  return answer.status === 200 && entry.outcome.value(output(answer.body)) ? null : `answered ${answer.status} ${answer.text.slice(0, 300)}`;
}

/** Runs `items` `width` at a time (the pool has four threads in the test stack). */
async function inTurns<T>(items: T[], each: (item: T) => Promise<string | null>, width = 3): Promise<string[]> {
  const queue = [...items];
  const problems: string[] = [];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const problem = await each(item);
      if (problem) problems.push(problem);
    }
  }));
  return problems;
}

beforeAll(async () => {
  workspace = await createWorkspace("Sandbox corpus");
  // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
  await liftLimits(workspace.id);
});

describe("the sandbox corpus", () => {
  it.each(Object.entries(CORPUS))("%s: each Function ends as documented, quickly, showing nothing of the host", async (_category, entries) => {
    const problems = await inTurns(entries, async (entry) => {
      // On a loaded machine a call can wait out its whole deadline for a thread; run it again alone.
      const answer = await callUntilItRan(() => manualRun(entry.name, functionState(entry.code)), (run) => String(run.body.error));
      const problem = problemWith(entry, answer, (body) => (body.output as { result?: unknown } | undefined)?.result);
      return problem && `${entry.name}: ${problem}`;
    });
    expect(problems).toEqual([]);
  }, 120_000);

  it("Condition expressions and Router patterns are held to the same limits", async () => {
    const problems = await inTurns(EXPRESSIONS, async (entry) => {
      const state = new WorkflowBuilder()
        .block("start", "manual_trigger", {}, { name: "Start" })
        .block("check", "condition", { conditions: [{ id: "yes", kind: "if", expression: entry.code }, { id: "no", kind: "else" }] }, { name: "Check" })
        .chain("start", "check")
        .build();
      const problem = problemWith(entry, await manualRun(entry.name, state), (body) => body.output);
      return problem && `${entry.name}: ${problem}`;
    });
    // A pattern that backtracks for ever, on the run's own input.
    const redos = await manualRun("ReDoS router", new WorkflowBuilder()
      .block("start", "manual_trigger", {}, { name: "Start" })
      .block("route", "router", { value: "a".repeat(40) + "b", routes: [{ id: "slow", operator: "matches", operand: "/^(a+)+$/" }, { id: "other", operator: "default" }] }, { name: "Route" })
      .chain("start", "route")
      .build(), 3_000);
    expect(problems).toEqual([]);
    // A Router's own limit is 30 s, past this run's 3 s: the run's timer ends it, off the request thread.
    expect([redos.status, redos.body.errorCode, redos.seconds < 20]).toEqual([408, "RUN_TIMEOUT", true]);
  }, 120_000);

  it("the workflow-sandbox function holds every Function of the corpus to the same outcome", async () => {
    const entries = Object.values(CORPUS).flat();
    const problems = await inTurns(entries, async (entry) => {
      const call = async () => {
        const started = performance.now();
        const response = await fetch(`${env.url}/functions/v1/workflow-sandbox`, {
          method: "POST",
          headers: { authorization: `Bearer ${env.serviceRoleKey}`, "content-type": "application/json" },
          body: JSON.stringify({ kind: "function", source: entry.code, valuesJson: "[]", timeoutMs: 1_500, memoryBytes: 32 * 1024 * 1024, maxResultChars: 4 * 1024 * 1024 }),
        });
        return { response, text: await response.text(), seconds: (performance.now() - started) / 1000 };
      };
      // As above: a call that waited out its deadline for a worker ran nothing; again.
      const { response, text, seconds } = await callUntilItRan(call, (answer) => answer.text);
      const body = text.startsWith("{") ? (JSON.parse(text) as { ok?: boolean; code?: string; resultJson?: string }) : {};
      // The function applies the result budget as OUTPUT_TOO_LARGE does in the pool.
      const failures = "fails" in entry.outcome ? entry.outcome.fails.map((code) => (code === "OUTPUT_TOO_LARGE" ? "RESULT_TOO_LARGE" : code)) : [];
      const fine = response.status === 200 && text.length <= MAX_ANSWER_CHARS && seconds < 20 && !SECRETS.some((secret) => text.includes(secret)) &&
        ("fails" in entry.outcome ? body.ok === false && (failures.includes(body.code ?? "") || entry.outcome.fails.includes(body.code ?? "")) : body.ok === true && entry.outcome.value(JSON.parse(body.resultJson ?? "null")));
      return fine ? null : `${entry.name}: ${response.status} in ${seconds.toFixed(1)} s: ${text.slice(0, 300)}`;
    }, 4);
    expect(problems).toEqual([]);
  }, 180_000);
});

describe("afterwards", () => {
  it("no global or prototype change reached the next run, nor the host's reading of outputs", async () => {
    // Dirty as many pool threads as there are, then read from as many fresh runs.
    await Promise.all(Array.from({ length: 4 }, (_, index) => manualRun(`Dirty ${index}`, functionState("globalThis.leak = 'secret'; Object.prototype.polluted = true; Array.prototype.map = () => 'hijacked'; JSON.stringify = () => '\"hijacked\"'; return 1;"))));
    const checks = await Promise.all(Array.from({ length: 4 }, (_, index) => manualRun(`Check ${index}`, new WorkflowBuilder()
      .block("start", "manual_trigger", {}, { name: "Start" })
      .block("work", "function", { code: "return { leak: typeof globalThis.leak, polluted: ({}).polluted === true, mapped: [1, 2].map((n) => n * 2), json: JSON.stringify({ a: 1 }) };" }, { name: "Work" })
      .block("host", "variables", { assignments: [{ name: "seen", value: "<work.result.polluted>" }] }, { name: "Host" })
      .chain("start", "work")
      .edge("work", "host")
      .build())));
    for (const check of checks) {
      expect(check.status).toBe(200);
      expect(check.text).toContain('"leak":"undefined"');
      expect(check.text).toContain('"mapped":[2,4]');
      expect(check.text).toContain('"json":"{\\"a\\":1}"');
      expect(check.text).not.toContain('"polluted":true');
    }
  }, 120_000);

  it("the API answers as before: a plain run and another service", async () => {
    const plain = await manualRun("Plain", functionState("return 1 + 1;"));
    expect([plain.status, (plain.body.output as { result?: number }).result]).toEqual([200, 2]);
    const other = await send(`${env.url}/api/users/me/usage-limits`, { headers: { authorization: `Bearer ${workspace.members.editor.accessToken}` } });
    expect(other.status).toBe(200);
  });
});
