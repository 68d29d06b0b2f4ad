import sharp, { type FormatEnum, type Metadata } from "sharp";
import { z } from "zod";
import { StorageFailure } from "./errors.ts";

/** Storage's transformation options (`transform` on downloads, signed and public URLs). */
export const transformOptions = z.object({
  width: z.coerce.number().int().min(0).optional(),
  height: z.coerce.number().int().min(0).optional(),
  resize: z.enum(["cover", "contain", "fill"]).optional(),
  format: z.enum(["origin", "avif", "webp"]).optional(),
  quality: z.coerce.number().int().min(20).max(100).optional(),
});
/** Decoded transformation options. */
export type TransformOptions = z.infer<typeof transformOptions>;

/** Largest source image transformed, as imgproxy's default limit (in megapixels) refuses bigger ones. */
const MAX_SOURCE_PIXELS = 50_000_000;
/** Largest output side Storage renders. */
const MAX_DIMENSION = 2500;

/** The `transformations` string Storage puts in a signed image URL's token ("width:100,height:50,resize:cover"). */
export function transformationsString(options: TransformOptions): string {
  const parts: string[] = [];
  if (options.width) parts.push(`width:${options.width}`);
  if (options.height) parts.push(`height:${options.height}`);
  if (options.resize) parts.push(`resize:${options.resize}`);
  if (options.quality) parts.push(`quality:${options.quality}`);
  if (options.format) parts.push(`format:${options.format}`);
  return parts.join(",");
}

/** Reads a token's `transformations` string back into options. */
export function parseTransformations(text: string): TransformOptions {
  const entries = text.split(",").filter(Boolean).map((part) => part.split(":") as [string, string]);
  return transformOptions.parse(Object.fromEntries(entries));
}

function imageError(status: number, message: string): StorageFailure {
  return new StorageFailure("InvalidRequest", status, message, "Image processing failed");
}

const FIT = { cover: "cover", contain: "contain", fill: "fill" } as const;

/**
 * Renders an image as Storage's imgproxy does: resized to width and/or height (`cover` by default,
 * `contain`, `fill`), re-encoded in its own format (or `webp`/`avif`) at `quality` (80 by default).
 * A source that is not an image, or one above 50 megapixels, is refused without a 5xx.
 */
export async function renderImage(bytes: Uint8Array, options: TransformOptions): Promise<{ body: Buffer; contentType: string }> {
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes).metadata();
  } catch {
    throw imageError(422, "The object is not an image in a supported format (JPEG, PNG, WebP, AVIF, GIF, TIFF)");
  }
  if ((metadata.width ?? 0) * (metadata.height ?? 0) > MAX_SOURCE_PIXELS) {
    throw imageError(413, "The source image is larger than 50 megapixels, the largest image transformed");
  }
  const width = options.width ? Math.min(options.width, MAX_DIMENSION) : undefined;
  const height = options.height ? Math.min(options.height, MAX_DIMENSION) : undefined;
  const quality = options.quality ?? 80;
  const format = options.format && options.format !== "origin" ? options.format : metadata.format;
  let pipeline = sharp(bytes).rotate();
  if (width || height) pipeline = pipeline.resize({ width, height, fit: FIT[options.resize ?? "cover"] });
  switch (format) {
    case "jpeg":
      pipeline = pipeline.jpeg({ quality });
      break;
    case "png":
      pipeline = pipeline.png({ quality });
      break;
    case "webp":
      pipeline = pipeline.webp({ quality });
      break;
    case "avif":
      pipeline = pipeline.avif({ quality });
      break;
    default:
      pipeline = pipeline.toFormat(format as keyof FormatEnum);
  }
  try {
    const body = await pipeline.toBuffer();
    return { body, contentType: `image/${format}` };
  } catch {
    throw imageError(422, `The image could not be rendered as ${format}`);
  }
}
