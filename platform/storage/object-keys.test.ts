import { describe, expect, it } from "vitest";
import { StorageFailure } from "./errors.ts";
import { assertBucketName, assertObjectKey, objectLocation, pathBucketId } from "./object-keys.ts";

describe("objectLocation", () => {
  it("splits bucket and object name after the route's own segments", () => {
    expect(objectLocation("/object/avatars/a/b.png", 1)).toEqual({ bucketId: "avatars", objectName: "a/b.png" });
    expect(objectLocation("/object/sign/avatars/a/b.png", 2)).toEqual({ bucketId: "avatars", objectName: "a/b.png" });
  });

  it("decodes each segment on its own, so an encoded slash stays inside its segment", () => {
    expect(objectLocation("/object/b/caf%C3%A9%20menu.txt", 1).objectName).toBe("café menu.txt");
    expect(objectLocation("/object/b/a%2Fb", 1).objectName).toBe("a/b");
  });

  it("refuses a malformed percent-encoding as an invalid key", () => {
    expect(() => objectLocation("/object/b/%E0%A4%A", 1)).toThrow(StorageFailure);
  });
});

describe("names read from a path", () => {
  it("refuses a NUL in a bucket id or an object name (Postgres cannot compare it) as invalid, not as a 500", () => {
    expect(() => objectLocation("/object/b/a%00b", 1)).toThrow(expect.objectContaining({ code: "InvalidKey" }));
    expect(() => objectLocation("/object/%00/a", 1)).toThrow(expect.objectContaining({ code: "InvalidBucketName" }));
    expect(() => pathBucketId("a\u0000b")).toThrow(StorageFailure);
    expect(pathBucketId("avatars")).toBe("avatars");
  });
});

describe("names", () => {
  it("accepts Storage's bucket characters and refuses others", () => {
    expect(() => assertBucketName("my-bucket_1.v2")).not.toThrow();
    expect(() => assertBucketName("a/b")).toThrow(StorageFailure);
    expect(() => assertBucketName("")).toThrow(StorageFailure);
  });

  it("refuses empty keys, control characters and keys over 1024 bytes", () => {
    expect(() => assertObjectKey("folder/file name (1).txt")).not.toThrow();
    expect(() => assertObjectKey("")).toThrow(StorageFailure);
    expect(() => assertObjectKey("a\u0001b")).toThrow(StorageFailure);
    expect(() => assertObjectKey("x".repeat(1025))).toThrow(StorageFailure);
  });
});
