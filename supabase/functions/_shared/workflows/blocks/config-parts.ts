/** Pieces several block configs are made of, so each rule about them is written once. */
import { z } from "zod";

/** An identifier usable as `<block.fieldName>` and as a JavaScript property name. */
export const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);

/** Ids of conditions and routes end up in edge handles (`condition-<id>`), so they stay simple. */
export const handleId = z.string().regex(/^[A-Za-z0-9_-]+$/);

/** A value that is either a literal number or a template such as `<api.count>` resolving to one. */
export const numberOrTemplate = (number: z.ZodNumber) => z.union([number, z.string().min(1)]);

/** Per-block timeout override, in milliseconds (the run's own timeout still applies). */
export const timeoutMs = (max: number) => z.number().int().min(1).max(max).optional();
