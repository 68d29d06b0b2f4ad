import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ListQuery, MessageSummary, OutgoingEmail, StoredAttachment, StoredMessage } from "./schemas.ts";

/**
 * Caught mail on disk: `<mailDir>/<id>/message.json` plus `<mailDir>/<id>/attachments/<index>` with
 * the raw bytes. Ids are UUIDv7, so sorting them sorts by arrival and "newest first" needs no index.
 * The folder survives restarts of the stack and can be inspected by hand.
 */
export class MailStore {
  constructor(private readonly dir: string) {}

  async save({ body, attachments }: OutgoingEmail): Promise<string> {
    const id = uuidv7();
    const folder = join(this.dir, id);
    const staging = join(this.dir, `.${id}.tmp`);
    await mkdir(join(staging, "attachments"), { recursive: true });
    const meta: StoredAttachment[] = [];
    for (const [index, item] of attachments.entries()) {
      await writeFile(join(staging, "attachments", String(index)), item.bytes);
      meta.push({
        index,
        filename: item.filename,
        content_type: item.content_type,
        ...(item.content_id ? { content_id: item.content_id } : {}),
        size: item.bytes.byteLength,
      });
    }
    const message: StoredMessage = {
      id,
      created_at: new Date().toISOString(),
      from: body.from,
      to: list(body.to),
      cc: list(body.cc),
      bcc: list(body.bcc),
      reply_to: list(body.reply_to),
      subject: body.subject,
      html: body.html ?? null,
      text: body.text ?? null,
      headers: body.headers ?? {},
      tags: body.tags ?? [],
      scheduled_at: body.scheduled_at ?? null,
      attachments: meta,
    };
    await writeFile(join(staging, "message.json"), JSON.stringify(message, null, 2));
    // Renaming the finished folder into place means readers never see half a message.
    await rename(staging, folder);
    return id;
  }

  async list(query: ListQuery): Promise<MessageSummary[]> {
    const ids = (await this.ids()).sort().reverse();
    const wanted = query.to?.trim().toLowerCase();
    const result: MessageSummary[] = [];
    for (const id of ids) {
      const message = await this.get(id);
      if (!message) continue;
      if (wanted && !message.to.some((recipient) => address(recipient) === wanted)) continue;
      const { html: _html, text: _text, headers: _headers, ...summary } = message;
      result.push(summary);
      if (query.limit && result.length >= query.limit) break;
    }
    return result;
  }

  async get(id: string): Promise<StoredMessage | null> {
    try {
      return JSON.parse(await readFile(join(this.dir, id, "message.json"), "utf8")) as StoredMessage;
    } catch {
      return null;
    }
  }

  async attachment(id: string, index: number): Promise<{ meta: StoredAttachment; bytes: Buffer } | null> {
    const message = await this.get(id);
    const meta = message?.attachments.find((item) => item.index === index);
    if (!meta) return null;
    return { meta, bytes: await readFile(join(this.dir, id, "attachments", String(index))) };
  }

  async remove(id: string): Promise<boolean> {
    if (!(await this.get(id))) return false;
    await rm(join(this.dir, id), { recursive: true, force: true });
    return true;
  }

  async clear(): Promise<number> {
    const ids = await this.ids();
    await Promise.all(ids.map((id) => rm(join(this.dir, id), { recursive: true, force: true })));
    return ids.length;
  }

  private async ids(): Promise<string[]> {
    const entries = await readdir(this.dir, { withFileTypes: true }).catch(() => []);
    return entries.filter((entry) => entry.isDirectory() && UUID.test(entry.name)).map((entry) => entry.name);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The bare address of `Name <addr>` or `addr`, lower-cased. */
export function address(recipient: string): string {
  const match = /<([^>]+)>\s*$/.exec(recipient);
  return (match ? match[1] : recipient).trim().toLowerCase();
}

let lastMs = 0;
let sequence = 0;

/** A UUIDv7 whose 12-bit counter keeps ids strictly increasing within one millisecond. */
export function uuidv7(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      sequence = 0;
    }
    ms = lastMs;
  } else {
    lastMs = ms;
    sequence = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
