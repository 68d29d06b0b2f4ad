import { describe, expect, it } from "vitest";
import { BLOCK_TYPES } from "../state/catalogue.ts";
import { BLOCK_HANDLERS } from "./index.ts";

describe("the handler registry", () => {
  it("has a handler for every block type except the containers the executor runs itself", () => {
    const types = Object.keys(BLOCK_TYPES).filter((type) => BLOCK_TYPES[type as keyof typeof BLOCK_TYPES].category !== "container");
    expect(Object.keys(BLOCK_HANDLERS).sort()).toEqual(types.sort());
  });
});
