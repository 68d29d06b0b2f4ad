import { describe, expect, it } from "vitest";
import { paginationLink } from "./pagination.ts";

describe("paginationLink", () => {
  it("links next and last with page first, as auth-js's parser needs", () => {
    const url = new URL("http://auth/admin/users?per_page=2&page=1");
    expect(paginationLink(url, 1, 2, 5)).toBe('</admin/users?page=2&per_page=2>; rel="next", </admin/users?page=3&per_page=2>; rel="last"');
  });

  it("has only a last link on the last page, and keeps empty parameters as auth-js sends them", () => {
    expect(paginationLink(new URL("http://auth/admin/users?page=&per_page="), 1, 50, 7)).toBe('</admin/users?page=1&per_page=>; rel="last"');
    expect(paginationLink(new URL("http://auth/admin/users?page=3&per_page=2"), 3, 2, 5)).toBe('</admin/users?page=3&per_page=2>; rel="last"');
  });
});
