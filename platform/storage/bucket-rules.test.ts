import { describe, expect, it } from "vitest";
import { assertMimeTypeAllowed, bucketSizeLimit, uploadLimit } from "./bucket-rules.ts";
import { StorageFailure } from "./errors.ts";

const MiB = 1024 ** 2;

describe("uploadLimit", () => {
  it("uses the bucket's limit when it is lower than the global one, and says which", () => {
    const limit = uploadLimit({ file_size_limit: 1024 }, 50 * MiB);
    expect(limit.bytes).toBe(1024);
    expect(limit.failure().body()).toMatchObject({ statusCode: "413", code: "EntityTooLarge" });
    expect(limit.failure().message).toBe("The object exceeded the maximum allowed size");
  });

  it("never lets a bucket raise the global limit", () => {
    expect(uploadLimit({ file_size_limit: 100 * MiB }, 50 * MiB).bytes).toBe(50 * MiB);
    expect(uploadLimit({ file_size_limit: null }, 50 * MiB).failure().message).toBe("The object exceeded the maximum allowed size");
  });
});

describe("assertMimeTypeAllowed", () => {
  const bucket = { allowed_mime_types: ["image/*", "text/plain"] };

  it("matches exactly or by family, ignoring parameters and case", () => {
    expect(() => assertMimeTypeAllowed(bucket, "image/png")).not.toThrow();
    expect(() => assertMimeTypeAllowed(bucket, "Text/Plain;charset=UTF-8")).not.toThrow();
    expect(() => assertMimeTypeAllowed({ allowed_mime_types: null }, "application/pdf")).not.toThrow();
  });

  it("refuses other types with InvalidMimeType", () => {
    expect(() => assertMimeTypeAllowed(bucket, "application/pdf")).toThrow(StorageFailure);
  });
});

describe("bucketSizeLimit", () => {
  it("accepts bytes or Storage's size strings up to the global limit", () => {
    expect(bucketSizeLimit(1000, 50 * MiB)).toBe(1000);
    expect(bucketSizeLimit("20MB", 50 * MiB)).toBe(20_000_000);
    expect(bucketSizeLimit(null, 50 * MiB)).toBeNull();
    expect(bucketSizeLimit(undefined, 50 * MiB)).toBeUndefined();
  });

  it("refuses malformed sizes and sizes over the global limit", () => {
    expect(() => bucketSizeLimit("lots", 50 * MiB)).toThrow(StorageFailure);
    expect(() => bucketSizeLimit("1GB", 50 * MiB)).toThrow(/The object exceeded the maximum allowed size/);
  });
});
