import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { PROJECT_ROOT } from "../../platform/config/stack-config.ts";

/** The dashboard of the stack under test (STUDIO_URL, exported by `npm test`). */
export const studioUrl = process.env.STUDIO_URL ?? "";
if (!studioUrl) throw new Error("STUDIO_URL is not set: run the tests through `npm test`, which starts the stack and exports it.");

/** Where the dashboard tests leave their screenshots (ignored by git, like the rest of .orbita/). */
export const SCREENSHOT_DIR = join(PROJECT_ROOT, ".orbita", "test-output", "dashboard");

/** Debian's Chromium, headless, as the chat page's browser test runs it. */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** A fresh page at a dashboard path, checked to have loaded with the local notice on it. */
export async function openPage(browser: Browser, path: string): Promise<Page> {
  const context = await browser.newContext({ locale: "en-GB", viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const response = await page.goto(`${studioUrl}${path}`);
  expect(response?.status()).toBe(200);
  await expectLocalNotice(page);
  return page;
}

/** Every page says it is the local platform's dashboard. */
export async function expectLocalNotice(page: Page): Promise<void> {
  expect(await page.getByRole("note").innerText()).toContain("Hosted projects use Supabase's dashboard");
}

/** Saves a full-page screenshot under SCREENSHOT_DIR. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Submits a form with the button named `button` and waits for the page it leads to. */
export async function submit(page: Page, button: string, scope = page.locator("body")): Promise<void> {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), scope.getByRole("button", { name: button, exact: true }).click()]);
  await expectLocalNotice(page);
}

/** One rule axe-core found broken, with where. */
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core (the pinned npm package, injected into the page itself) and expects no serious or
 * critical violation; the minor and moderate ones are left to judgement.
 */
export async function expectAccessible(page: Page): Promise<void> {
  await page.addScriptTag({ path: join(PROJECT_ROOT, "node_modules", "axe-core", "axe.min.js") });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ["violations"] })).violations;
  });
  const grave = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
  expect(grave.map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.slice(0, 3).map((node) => node.target.join(" ")).join(", ")}`), new URL(page.url()).pathname).toEqual([]);
}
