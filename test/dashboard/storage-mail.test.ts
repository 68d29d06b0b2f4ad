/**
 * The dashboard's Storage and Mail pages in headless Chromium against the running stack: a file
 * uploaded into a folder, listed, downloaded, shared through a signed link and deleted; a file the
 * bucket's limits refuse, with storage's refusal in words; and the mail catcher embedded.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { launchBrowser, openPage, screenshot, submit } from "./browser.ts";

const sql = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
const folder = `dashboard-${randomUUID().slice(0, 8)}`;
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sql`delete from storage.objects where bucket_id = 'test-private' and name like ${`${folder}/%`}`;
  await sql.end();
});

describe("the Storage page in Chromium", () => {
  it("uploads a file into a folder, downloads it, signs a link to it and deletes it", async () => {
    const contents = `Notes from the dashboard ${folder}\n`;
    const page = await openPage(browser, "/storage");
    const bucketRow = page.getByRole("row").filter({ has: page.getByRole("link", { name: "test-private", exact: true }) });
    expect(await bucketRow.locator("td").nth(1).innerText()).toBe("no");
    await Promise.all([page.waitForURL(/\/storage\/test-private$/), page.getByRole("link", { name: "test-private", exact: true }).click()]);

    const upload = page.getByRole("form", { name: "Upload a file" });
    await upload.getByLabel("File").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from(contents) });
    await upload.getByLabel("Name (optional)").fill(`${folder}/notes.txt`);
    await submit(page, "Upload", upload);
    expect(await page.getByRole("status").innerText()).toBe(`Uploaded ${folder}/notes.txt`);
    expect(await sql`select metadata->>'mimetype' as type, (metadata->>'size')::int as size from storage.objects where bucket_id = 'test-private' and name = ${`${folder}/notes.txt`}`)
      .toEqual([{ type: "text/plain", size: Buffer.byteLength(contents) }]);

    // The same name again without "replace": storage's refusal, in words.
    await upload.getByLabel("File").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("other") });
    await upload.getByLabel("Name (optional)").fill(`${folder}/notes.txt`);
    await submit(page, "Upload", upload);
    expect(await page.getByRole("alert").innerText()).toMatch(/already exists/i);

    await Promise.all([page.waitForURL(/prefix=/), page.getByRole("link", { name: `${folder}/` }).click()]);
    const row = page.getByRole("row").filter({ hasText: "notes.txt" });
    expect(await row.locator("td").nth(1).innerText()).toBe("text/plain");
    await screenshot(page, "storage-folder");

    const [download] = await Promise.all([page.waitForEvent("download"), row.getByRole("link", { name: "Download" }).click()]);
    expect(download.suggestedFilename()).toBe("notes.txt");
    expect(readFileSync(await download.path(), "utf8")).toBe(contents);

    await submit(page, "Signed link", row);
    const signed = await page.locator("a.signed-link").getAttribute("href");
    expect(signed).toMatch(new RegExp(`^${env.url}/storage/v1/object/sign/test-private/${folder}/notes.txt\\?token=`));
    const fetched = await fetch(signed as string);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe(contents);

    await submit(page, "Delete", page.getByRole("row").filter({ hasText: "notes.txt" }));
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(`Delete test-private/${folder}/notes.txt?`);
    expect((await sql`select 1 from storage.objects where bucket_id = 'test-private' and name = ${`${folder}/notes.txt`}`).length).toBe(1);
    await submit(page, "Delete file");
    expect(await page.getByRole("status").innerText()).toBe(`Deleted ${folder}/notes.txt`);
    expect((await sql`select 1 from storage.objects where bucket_id = 'test-private' and name = ${`${folder}/notes.txt`}`).length).toBe(0);
    await page.context().close();
  }, 120_000);

  it("shows the bucket's refusal of a file over its size limit or of a type it does not allow, and stores nothing", async () => {
    const page = await openPage(browser, "/storage/test-limited");
    const upload = page.getByRole("form", { name: "Upload a file" });
    await upload.getByLabel("File").setInputFiles({ name: `${folder}-big.txt`, mimeType: "text/plain", buffer: Buffer.alloc(4096, 97) });
    await submit(page, "Upload", upload);
    expect(await page.getByRole("alert").innerText()).toMatch(/maximum allowed size/i);
    await upload.getByLabel("File").setInputFiles({ name: `${folder}.pdf`, mimeType: "application/pdf", buffer: Buffer.from("%PDF-1.4") });
    await submit(page, "Upload", upload);
    expect(await page.getByRole("alert").innerText()).toMatch(/mime type application\/pdf is not supported/i);
    expect((await sql`select 1 from storage.objects where bucket_id = 'test-limited' and name like ${`${folder}%`}`).length).toBe(0);
    await page.context().close();
  }, 120_000);
});

describe("the Mail page in Chromium", () => {
  it("links and embeds the mail catcher's page", async () => {
    const page = await openPage(browser, "/mail");
    expect(await page.getByRole("link", { name: "Open the mail catcher" }).getAttribute("href")).toBe(env.mailUrl);
    expect(await page.locator("iframe[title='Caught mail']").getAttribute("src")).toBe(env.mailUrl);
    const frame = page.frameLocator("iframe[title='Caught mail']");
    await frame.locator("body").waitFor();
    expect(await frame.locator("body").innerText()).toContain("Orbita mail catcher");
    await screenshot(page, "mail");
    await page.context().close();
  }, 120_000);
});
