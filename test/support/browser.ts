/**
 * The browser of the end-to-end tests: Debian's Chromium (/usr/bin/chromium) through playwright-core,
 * headless, never a downloaded browser; the tests skip (and say why) when it or the built page is missing.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createLocalDemoServer } from './fixtures.js';
import { startTestPlatform, type TestPlatform } from './harness.js';
import { until } from './wait.js';

export const CHROMIUM = '/usr/bin/chromium';
export const WEB_INDEX = path.resolve(__dirname, '../../web/dist/index.html');
export const ARTIFACTS = path.resolve(__dirname, '../../test-artifacts/web');
/** As root, without a sandbox; no background networking (the machine has no network). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync'];

/** `describe`, or `describe.skip` with a warning naming what is missing. */
export function describeWithBrowser(file: string): jest.Describe {
  const missing = [!existsSync(WEB_INDEX) && `${WEB_INDEX} (run \`npm run build:web\`)`, !existsSync(CHROMIUM) && `${CHROMIUM} (apt-get install chromium)`].filter(Boolean);
  if (missing.length) console.warn(`${file}: browser tests skipped: missing ${missing.join(' and ')}`);
  return missing.length ? describe.skip : describe;
}

export interface PageOptions {
  viewport?: { width: number; height: number };
  isMobile?: boolean;
  hasTouch?: boolean;
  /** 'accept' (default): every confirm() and prompt() is accepted as it is; 'manual': the test answers them */
  dialogs?: 'accept' | 'manual';
  /** also count the console's errors (failed requests, CSP violations) as problems */
  consoleErrors?: boolean;
}

/**
 * Chromium for one test file: pages in contexts of their own (closed with it), and the problems
 * (page errors, and console errors where asked) every page ran into.
 */
export class TestBrowser {
  readonly problems: string[] = [];
  private readonly contexts: BrowserContext[] = [];

  private constructor(readonly browser: Browser) {}

  static async launch(): Promise<TestBrowser> {
    mkdirSync(ARTIFACTS, { recursive: true });
    return new TestBrowser(await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 }));
  }

  async newPage(opts: PageOptions = {}): Promise<Page> {
    const ctx = await this.browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 900 }, isMobile: opts.isMobile, hasTouch: opts.hasTouch, reducedMotion: 'reduce' });
    this.contexts.push(ctx);
    const page = await ctx.newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (e) => this.problems.push(`pageerror: ${e.message}`));
    if (opts.consoleErrors) page.on('console', (m) => m.type() === 'error' && this.problems.push(`console: ${m.text()}`));
    if ((opts.dialogs ?? 'accept') === 'accept') page.on('dialog', (d) => void d.accept());
    return page;
  }

  /** Signs in on `page` and waits for the server list. */
  async signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
    await page.goto(baseUrl + '/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1 }).filter({ hasText: /servers/i }).waitFor();
  }

  /** A new page, signed in. */
  async signedInPage(baseUrl: string, email: string, password: string, opts: PageOptions = {}): Promise<Page> {
    const page = await this.newPage(opts);
    await this.signIn(page, baseUrl, email, password);
    return page;
  }

  async close(): Promise<void> {
    for (const c of this.contexts) await c.close().catch(() => undefined);
    await this.browser.close().catch(() => undefined);
  }
}

/**
 * Holds the page's GraphQL WebSocket before its first message reaches the panel (the page sees it
 * open; the panel sees nothing) until the returned function is called: what the page loads over
 * HTTP meanwhile comes before its subscriptions are live.
 */
export async function holdLiveSocket(page: Page): Promise<() => void> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.routeWebSocket(/\/graphql$/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage(async (message) => {
      await held;
      server.send(message);
    });
  });
  return release;
}

/** A platform with its local node agent, its first administrator signed in, and Chromium: an administration page test's start. */
export interface AdminWorld {
  p: TestPlatform;
  tb: TestBrowser;
  admin: { token: string; user: any };
}

/** Registers the hooks that start an AdminWorld before the file's tests and stop it after them. */
export function adminWorld(): AdminWorld {
  const w = {} as AdminWorld;
  beforeAll(async () => {
    w.p = await startTestPlatform({ localAgent: true, agentPort: 0 });
    w.admin = await w.p.admin();
    w.tb = await TestBrowser.launch();
  }, 120_000);
  afterAll(async () => {
    await w.tb?.close();
    await w.p?.stop();
  }, 60_000);
  return w;
}

/** An AdminWorld plus an owner with a demo server: what a server page test starts from. */
export interface WebWorld extends AdminWorld {
  owner: { token: string; user: any; email: string; password: string };
  serverId: string;
}

/**
 * Registers the hooks that start a WebWorld before the file's tests (the owner's demo server named
 * `serverName`) and stop it after them; its fields are set once the `beforeAll` hooks have run.
 */
export function webWorld(serverName: string): WebWorld {
  const w = adminWorld() as WebWorld;
  beforeAll(async () => {
    w.owner = await w.p.newUser('Owner');
    w.serverId = await createLocalDemoServer(w.p, w.admin.token, w.owner.token, serverName);
  }, 60_000);
  return w;
}

/**
 * Answers the confirmations `page` asks (accepts while `answer` is true, else dismisses) and keeps
 * their messages: `asked()` waits for the next one's. The page must be opened with `dialogs: 'manual'`.
 */
export function confirmations(page: Page): { answer: boolean; asked(): Promise<string> } {
  const messages: string[] = [];
  const answers = {
    answer: true,
    async asked(): Promise<string> {
      await until(() => messages.length > 0, 10_000, 'a confirmation');
      return messages.shift()!;
    },
  };
  page.on('dialog', (d) => {
    messages.push(d.message());
    void (answers.answer ? d.accept() : d.dismiss());
  });
  return answers;
}

/** The page's own `document`, in functions that run in the browser (page.evaluate). */
declare const document: any;

/**
 * How wide the page is against the screen, and the elements of `main` that reach past its right edge
 * (those inside `exempt`, a selector of what scrolls on its own, aside): at most five, by tag and class.
 */
export function horizontalOverflow(page: Page, exempt = ''): Promise<{ scrollWidth: number; width: number; past: string[] }> {
  return page.evaluate((skip) => {
    const vw = document.documentElement.clientWidth;
    const past = (Array.from(document.querySelectorAll('main *')) as any[])
      .filter((el) => el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().right > vw + 0.5 && !(skip && el.closest(skip)))
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
    return { scrollWidth: document.documentElement.scrollWidth, width: vw, past: [...new Set(past)].slice(0, 5) };
  }, exempt);
}
