import { describe, expect, it } from "vitest";
import { fn, flow, ifElse, run } from "../../../../../test/helpers/workflows/flows.ts";

describe("references", () => {
  it("resolves block outputs by normalised name, nested paths and array indexes", async () => {
    const builder = flow()
      .block("make", "function", fn("return { items: [{ id: 'a' }, { id: 'b' }], count: 2 };"), { name: "Make Items" })
      .block("read", "variables", {
        assignments: [
          { name: "whole", value: "<makeitems.result.items>" },
          { name: "second", value: "<makeitems.result.items[1].id>" },
          { name: "dotted", value: "<makeitems.result.items.0.id>" },
          { name: "length", value: "<makeitems.result.items.length>" },
          { name: "text", value: "count=<makeitems.result.count> first=<makeitems.result.items[0]>" },
        ],
      })
      .chain("start", "make", "read");
    const result = await run(builder);
    expect(result.context.variables).toEqual({
      whole: [{ id: "a" }, { id: "b" }],
      second: "b",
      dotted: "a",
      length: 2,
      text: 'count=2 first={"id":"a"}',
    });
  });

  it("resolves environment variables whole and inside text (the result masks their values)", async () => {
    const builder = flow()
      .block("read", "variables", { assignments: [{ name: "key", value: "{{API_KEY}}" }, { name: "header", value: "Bearer {{ API_KEY }}" }] })
      .block("check", "function", fn("return [<read.key> === {{API_KEY}}, <read.header> === 'Bearer ' + {{API_KEY}}, <read.key>.length];"))
      .chain("start", "read", "check");
    const result = await run(builder, { env: { API_KEY: "s3cret" } });
    expect(result.output).toEqual({ result: [true, true, 6], stdout: "" });
    expect(result.context.variables).toEqual({ key: "***", header: "Bearer ***" });
    expect(result.context.environment).toEqual(["API_KEY"]);
  });


  it("passes references into code as values, never as source text", async () => {
    const builder = flow()
      .block("echo", "function", fn("return { type: typeof <start.input.payload>, value: <start.input.payload>, key: {{KEY}} };"))
      .chain("start", "echo");
    const payload = '"); while (true) {} //';
    const result = await run(builder, { env: { KEY: "k" }, trigger: { kind: "manual", input: { payload } } });
    // "k" is too short to mask inside text; as a whole value it is masked.
    expect(result.output).toEqual({ result: { type: "string", value: payload, key: "***" }, stdout: "" });
  });

  it("fails the run with the reference in the message when a path is missing", async () => {
    const builder = flow().block("make", "function", fn("return { name: 'x' };"), { name: "Make" }).block("read", "variables", { assignments: [{ name: "v", value: "<make.result.nmae>" }] }, { name: "Read" }).chain("start", "make", "read");
    const result = await run(builder);
    expect(result.error).toMatchObject({ code: "REFERENCE_NOT_FOUND", block: { name: "Read" } });
    expect(result.error?.message).toBe('Block "Read" (variables): reference <make.result.nmae> failed: the output of "Make" has no "result.nmae" (it has name)');
  });

  it("fails the run naming a missing environment variable", async () => {
    const result = await run(flow().block("read", "variables", { assignments: [{ name: "v", value: "{{MISSING}}" }] }, { name: "Read" }).chain("start", "read"));
    expect(result.error).toMatchObject({ code: "ENV_VAR_NOT_FOUND" });
    expect(result.error?.message).toContain("{{MISSING}}");
  });

  it("reads a block on a branch that did not run as null", async () => {
    const builder = flow()
      .block("check", "condition", ifElse("false"))
      .block("yes", "function", fn("return 'yes';"))
      .block("no", "function", fn("return 'no';"))
      .block("join", "variables", { assignments: [{ name: "yes", value: "<yes.result>" }, { name: "no", value: "<no.result>" }] })
      .edge("start", "check")
      .edge("check", "yes", "condition-yes")
      .edge("check", "no", "condition-no")
      .edge("yes", "join")
      .edge("no", "join");
    const result = await run(builder);
    expect(result.context.variables).toEqual({ yes: null, no: "no" });
  });

  it("reads workflow variables set earlier", async () => {
    const builder = flow()
      .block("set", "variables", { assignments: [{ name: "greeting", value: "hi" }] })
      .block("use", "function", fn("return <variable.greeting> + '!';"))
      .chain("start", "set", "use");
    expect((await run(builder)).output).toEqual({ result: "hi!", stdout: "" });
  });
});
