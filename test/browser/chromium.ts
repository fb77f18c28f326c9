import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { IN_CI } from '../helper.js';

/** Debian's chromium; a browser is never downloaded. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/**
 * All but --disable-gpu repeat what Playwright passes anyway (its `chromiumSwitches`). Flags that
 * share or limit renderers, drop the spare renderer or move the GPU process in made no measurable
 * difference to the tests' CPU (bench/README.md, "Test files and CI time", chromecpu).
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
];
export const SCREENSHOT_DIR = path.resolve('test-artifacts/screenshots');

/**
 * Why browser tests cannot run here, or false when they can. Without chromium they skip on a
 * developer machine; in CI (CI set) a missing chromium is a failure, never a skip.
 */
export function chromiumMissing(): string | false {
  if (fs.existsSync(CHROMIUM_PATH)) return false;
  if (IN_CI) throw new Error(`${CHROMIUM_PATH} is required in CI (apt-get install chromium)`);
  return `${CHROMIUM_PATH} is not installed`;
}

export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...extraArgs], headless: true });
}

/**
 * One Chromium for a test file. Each page gets a context of its own (its own cookies, language and
 * viewport) and is watched for page errors and CSP violations from its first script; `closePages`
 * closes the contexts opened so far (a file calls it after each test), `close` every context and
 * the browser, whatever state a failed test left them in.
 */
export class ChromiumPages {
  private readonly contexts: BrowserContext[] = [];
  private readonly watched: string[][] = [];

  private constructor(readonly browser: Browser) {}

  static async launch(extraArgs: string[] = []): Promise<ChromiumPages> {
    return new ChromiumPages(await launchChromium(extraArgs));
  }

  /** A page in a new context; `initScript` runs in it before the page's own scripts. */
  async newPage(options: BrowserContextOptions = {}, initScript?: string): Promise<Page> {
    const context = await this.browser.newContext(options);
    this.contexts.push(context);
    if (initScript) await context.addInitScript({ content: initScript });
    const page = await context.newPage();
    this.watched.push(watchProblems(page));
    return page;
  }

  /** Every page error and CSP violation seen so far, on any page. */
  problems(): string[] {
    return this.watched.flat();
  }

  /**
   * Closes every page opened so far. A page left open keeps its renderer busy for the rest of the
   * file: a live widget or dashboard runs its animations, timers and WebSocket, and the server
   * pushes to it. What they reported stays in `problems()`.
   */
  async closePages(): Promise<void> {
    for (const c of this.contexts.splice(0)) await c.close().catch(() => {});
  }

  async close(): Promise<void> {
    await this.closePages();
    await this.browser.close();
  }
}

/**
 * Screenshots are for a person to look at; no test reads them. They are taken only when asked
 * (`OPENALERTS_SCREENSHOTS=1 npm test -- <files>`): a full-page capture re-lays out and rasters
 * the whole page and Chromium encodes it as PNG, about a seventh of the languages file's CPU.
 */
export const SCREENSHOTS = process.env.OPENALERTS_SCREENSHOTS === '1';

/** Saves test-artifacts/screenshots/<name>.png (the folder is git-ignored) when SCREENSHOTS; its path, or null. */
export async function screenshot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<string | null> {
  if (!SCREENSHOTS) return null;
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: opts.fullPage ?? true });
  return file;
}

/**
 * Collects what must never happen on our pages: uncaught errors and Content-Security-Policy
 * violations (Chromium reports both on the console), so a test can assert the list is empty.
 */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    const text = msg.text();
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(text)) problems.push(`${page.url()}: ${text}`);
  });
  return problems;
}
