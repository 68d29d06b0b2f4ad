import { describe, expect, it } from "vitest";
import { unfilteredWriteError } from "./safe-update.ts";

describe("unfilteredWriteError (pg-safeupdate emulation)", () => {
  it("refuses a DELETE with no filter, as pg-safeupdate does", async () => {
    const response = unfilteredWriteError("DELETE", "/todos", new URLSearchParams("select=*"));
    expect(response?.status).toBe(400);
    expect(await response?.json()).toEqual({ code: "21000", details: null, hint: null, message: "DELETE requires a WHERE clause" });
  });

  it("refuses an unfiltered PATCH with the UPDATE wording", async () => {
    expect(await unfilteredWriteError("PATCH", "/todos", new URLSearchParams())?.json()).toMatchObject({ message: "UPDATE requires a WHERE clause" });
  });

  it("lets filtered writes, reads and RPC calls through", () => {
    expect(unfilteredWriteError("DELETE", "/todos", new URLSearchParams("id=eq.1"))).toBeNull();
    expect(unfilteredWriteError("PATCH", "/todos", new URLSearchParams("or=(a.eq.1,b.eq.2)"))).toBeNull();
    expect(unfilteredWriteError("GET", "/todos", new URLSearchParams())).toBeNull();
    expect(unfilteredWriteError("PATCH", "/rpc/f", new URLSearchParams())).toBeNull();
  });
});
