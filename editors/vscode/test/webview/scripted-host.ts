// A "scripted host" for the chat page in headless Chromium: the real page (webviewHtml +
// dist/webview.js + dist/webview.css, under its CSP) served from 127.0.0.1, with a stub
// acquireVsCodeApi that records what the page posts and keeps setState in sessionStorage
// (so it survives a reload as VS Code's does); the test sends HostMessages and answers
// the page's requests. As the extension does, it sends a reset with the last entries whole
// (the others by id alone) and answers the page's `entries` requests from its own copy of
// the state (at each `frame`).

import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { ChannelInfo } from '../../src/core/protocol.generated';
import { initialState, reduce, type ChatEvent, type ChatState } from '../../src/core/chat-state';
import { PageFeed } from '../../src/extension/page-feed';
import { entriesOf, fromMessage, toMessage } from '../../src/core/transcript';
import {
  WHOLE_AT_RESET,
  type HostMessage,
  type WebviewMessage,
  type WebviewOp,
  type WebviewOps,
} from '../../src/shared/webview-messages';
import { webviewHtml } from '../../src/webview/index.html';

const ROOT = path.resolve(__dirname, '../../..');
export const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'webview');
const CHROMIUM = '/usr/bin/chromium';

/** A VS Code Dark Modern theme's variables, as VS Code puts them on the webview's <html>. */
const DARK_THEME = `
  --vscode-font-family: "Segoe WPC", "Segoe UI", "Ubuntu", "Droid Sans", sans-serif; --vscode-font-size: 13px;
  --vscode-editor-font-family: "DejaVu Sans Mono", "Droid Sans Mono", monospace; --vscode-editor-font-size: 13px;
  --vscode-foreground: #cccccc; --vscode-descriptionForeground: #9d9d9d; --vscode-editor-background: #1f1f1f;
  --vscode-focusBorder: #0078d4; --vscode-widget-border: #313131; --vscode-panel-border: #2b2b2b;
  --vscode-button-background: #0078d4; --vscode-button-foreground: #ffffff; --vscode-button-hoverBackground: #026ec1;
  --vscode-button-secondaryBackground: #313131; --vscode-button-secondaryForeground: #cccccc;
  --vscode-button-secondaryHoverBackground: #3c3c3c; --vscode-button-border: rgba(255, 255, 255, 0.07);
  --vscode-input-background: #313131; --vscode-input-foreground: #cccccc; --vscode-input-border: #3c3c3c;
  --vscode-input-placeholderForeground: #989898; --vscode-dropdown-background: #313131;
  --vscode-dropdown-foreground: #cccccc; --vscode-dropdown-border: #3c3c3c;
  --vscode-textLink-foreground: #4daafc; --vscode-textLink-activeForeground: #4daafc;
  --vscode-textCodeBlock-background: #2b2b2b; --vscode-textBlockQuote-border: #616161;
  --vscode-diffEditor-insertedTextBackground: rgba(156, 204, 44, 0.2); --vscode-diffEditor-removedTextBackground: rgba(255, 0, 0, 0.2);
  --vscode-diffEditor-insertedLineBackground: rgba(155, 185, 85, 0.2); --vscode-diffEditor-removedLineBackground: rgba(255, 0, 0, 0.2);
  --vscode-errorForeground: #f85149; --vscode-editorWarning-foreground: #cca700; --vscode-testing-iconPassed: #73c991;
  --vscode-editorWidget-background: #202020; --vscode-badge-background: #616161; --vscode-badge-foreground: #f8f8f8;
  --vscode-list-hoverBackground: #2a2d2e; --vscode-list-activeSelectionBackground: #04395e;
  --vscode-list-activeSelectionForeground: #ffffff; --vscode-progressBar-background: #0078d4;
  --vscode-editorLineNumber-foreground: #6e7681; --vscode-gitDecoration-addedResourceForeground: #81b88b;
  --vscode-gitDecoration-deletedResourceForeground: #c74e39; --vscode-editorSuggestWidget-background: #202020;
  --vscode-editorSuggestWidget-border: #454545; --vscode-editorSuggestWidget-selectedBackground: #04395e;
  --vscode-widget-shadow: rgba(0, 0, 0, 0.36); --vscode-toolbar-hoverBackground: rgba(90, 93, 94, 0.31);
  --vscode-icon-foreground: #cccccc; --vscode-notifications-background: #1f1f1f;
  --vscode-symbolIcon-functionForeground: #dcdcaa; --vscode-symbolIcon-classForeground: #4ec9b0;
  --vscode-symbolIcon-variableForeground: #9cdcfe; --vscode-debugTokenExpression-name: #569cd6;
  --vscode-debugTokenExpression-string: #ce9178; --vscode-debugTokenExpression-number: #b5cea8;
  --vscode-debugTokenExpression-boolean: #c586c0;`;

/** The stand-in for VS Code's webview API, loaded before the page's script. */
const STUB = `
window.__posted = [];
window.acquireVsCodeApi = () => ({
  postMessage: (m) => window.__posted.push(JSON.parse(JSON.stringify(m))),
  getState: () => JSON.parse(sessionStorage.getItem('vscode-state') || 'null') ?? undefined,
  setState: (s) => sessionStorage.setItem('vscode-state', JSON.stringify(s)),
});`;

export const INFO: ChannelInfo = {
  account: null,
  agents: [],
  availableOutputStyles: [],
  cliVersion: '2.1.330',
  commands: [
    {
      name: 'compact',
      description: 'Clear conversation history but keep a summary in context',
      argumentHint: '<optional instructions>',
    },
    { name: 'context', description: 'Show how full the context window is' },
    { name: 'review', description: 'Review the current diff' },
  ],
  effort: null,
  fastModeState: 'off',
  model: 'default',
  models: [
    {
      value: 'default',
      displayName: 'Default (recommended)',
      resolvedModel: 'claude-opus-5-5',
      supportedEffortLevels: ['low', 'medium', 'high'],
    },
    { value: 'haiku', displayName: 'Haiku', resolvedModel: 'claude-haiku-5-5' },
  ],
  outputStyle: 'default',
  permissionMode: 'default',
  totalCostUsd: 0,
  context: null,
  worktree: null,
};

/** The build's files the page loads (dist/highlight.js: not in a build from before issue 43's split). */
const SERVED = new Set(['/webview.js', '/highlight.js', '/webview.css']);

/** Serves the page; one per test file. */
export class PageServer {
  private server: http.Server | undefined;
  url = '';

  /** `dist`: the folder of webview.js and webview.css (a bench compares builds). */
  constructor(private readonly dist = path.join(ROOT, 'dist')) {}

  async start(): Promise<void> {
    const dist = this.dist;
    for (const file of ['webview.js', 'webview.css']) {
      if (!fs.existsSync(path.join(dist, file))) throw new Error(`dist/${file} is missing: run npm run build first`);
    }
    this.server = http.createServer((req, res) => {
      const origin = `http://${req.headers.host}`;
      const nonce = Math.random().toString(36).slice(2);
      if (req.url === '/' || req.url?.startsWith('/?')) {
        const html = webviewHtml({
          scriptUri: `${origin}/webview.js`,
          highlightUri: `${origin}/highlight.js`,
          styleUri: `${origin}/webview.css`,
          cspSource: origin,
          nonce,
        })
          .replace('<html lang="en">', `<html lang="en" style='${DARK_THEME.replace(/\n/g, ' ')}'>`)
          .replace('<body>', '<body class="vscode-dark">')
          .replace('<script nonce', `<script nonce="${nonce}" src="${origin}/stub.js"></script>\n<script nonce`);
        res.writeHead(200, { 'content-type': 'text/html' }).end(html);
      } else if (req.url === '/stub.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(STUB);
      } else if (SERVED.has(req.url ?? '') && fs.existsSync(path.join(dist, req.url!.slice(1)))) {
        const file = req.url!.slice(1);
        const type = file.endsWith('.js') ? 'text/javascript' : 'text/css';
        res.writeHead(200, { 'content-type': type }).end(fs.readFileSync(path.join(dist, file)));
      } else if (req.url === '/favicon.ico') {
        res.writeHead(204).end(); // asked by Chromium itself, not by the page
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

export async function launch(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/toolchain.sh (Debian chromium)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

type Request = Extract<WebviewMessage, { type: 'request' }>;

/** The page and the host side of its messages. */
export class ScriptedHost {
  private answered = new Set<number>();
  readonly errors: string[] = [];
  /** The host's copy of the chat state, which the events are applied to before they go (as the extension's). */
  private state: ChatState = initialState();
  private readonly sending: Promise<void>[] = [];
  /** The extension's own coalescing of events, flushed by `events` (no timer decides what a test sees). */
  private readonly feed: PageFeed = new PageFeed((message) =>
    this.sending.push(
      this.send(message).then(() => {
        if (message.type === 'events') this.feed.received();
      }),
    ),
  );

  constructor(readonly page: Page) {
    page.on('pageerror', (e) => this.errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') this.errors.push(m.text());
    });
  }

  /** `prepare`: what the test does to the page before it loads (routes, say). */
  static async open(
    browser: Browser,
    server: PageServer,
    viewport = { width: 560, height: 820 },
    prepare?: (page: Page) => Promise<void>,
  ): Promise<ScriptedHost> {
    const page = await browser.newPage({ viewport });
    const host = new ScriptedHost(page);
    await prepare?.(page);
    // Not the load event: it waits for dist/highlight.js, which the page does not (a test may hold it).
    await page.goto(server.url, { waitUntil: 'domcontentloaded' });
    await host.waitForPosted((m) => m.type === 'ready');
    return host;
  }

  async send(message: HostMessage): Promise<void> {
    await this.page.evaluate((m) => window.postMessage(m, '*'), message as unknown as Record<string, unknown>);
  }

  /** The entries the page asked for (`entries` requests), since it opened. */
  entriesAsked = 0;
  /** The page's messages looked through for `entries` requests. */
  private entriesSeen = 0;

  async reset(state: ChatState, info: ChannelInfo | null = INFO, allowBypassPermissions = false): Promise<void> {
    this.state = fromMessage(structuredClone(toMessage(state, Infinity)));
    this.feed.reset({
      type: 'reset',
      state: toMessage(state, WHOLE_AT_RESET),
      info,
      workspaceFolders: ['/home/dev/project'],
      allowBypassPermissions,
    });
    await this.sent();
    await this.frame();
  }

  /** Applies the events to the host's state and sends them through the extension's feed, all at once. */
  async events(events: ChatEvent[]): Promise<void> {
    for (const event of events) this.feed.event(event, reduce(this.state, event).rev);
    this.feed.flush();
    await this.sent();
    await this.frame();
  }

  private async sent(): Promise<void> {
    await Promise.all(this.sending.splice(0));
  }

  /** Waits until the page has drawn what it was sent (one animation frame after the messages),
   * what it drew once the entries it asked for came (answered from the host's state), and
   * the chunks near the view it draws over several frames. */
  async frame(): Promise<void> {
    for (let round = 0; ; round++) {
      await this.page.evaluate(
        () => new Promise((resolve) => setTimeout(() => requestAnimationFrame(() => resolve(null)), 0)),
      );
      // The messages posted since the last look (a long scroll posts thousands), and whether
      // chunks near the view are left to draw (a chunk drawn a few entries a frame).
      const [asked, seen, busy] = await this.page.evaluate((from) => {
        const posted = (window as unknown as { __posted: WebviewMessage[] }).__posted;
        const fresh = posted
          .slice(from)
          .filter((m): m is Extract<Request, { op: 'entries' }> => m.type === 'request' && m.op === 'entries');
        return [fresh, posted.length, document.querySelector('.entries[aria-busy="true"]') !== null] as const;
      }, this.entriesSeen);
      this.entriesSeen = seen;
      if (!asked.length && !busy) return;
      if (round > 500) throw new Error('the page keeps asking for entries, or drawing a chunk');
      for (const request of asked) {
        this.answered.add(request.id);
        this.entriesAsked += request.params.ids.length;
        await this.send({
          type: 'response',
          id: request.id,
          result: { entries: entriesOf(this.state, request.params.ids) },
        });
      }
    }
  }

  async posted(): Promise<WebviewMessage[]> {
    return this.page.evaluate(() => (window as unknown as { __posted: WebviewMessage[] }).__posted);
  }

  async waitForPosted(match: (m: WebviewMessage) => boolean, timeout = 5000): Promise<WebviewMessage> {
    const deadline = Date.now() + timeout;
    for (;;) {
      const found = (await this.posted()).find(match);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`the page did not post the message expected; it posted ${JSON.stringify(await this.posted())}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** The next request of `op` not answered yet (that `where` accepts, when given). */
  async request<K extends WebviewOp>(
    op: K,
    where: (request: Extract<Request, { op: K }>) => boolean = () => true,
  ): Promise<Extract<Request, { op: K }>> {
    const found = await this.waitForPosted(
      (m) => m.type === 'request' && m.op === op && !this.answered.has(m.id) && where(m as Extract<Request, { op: K }>),
    );
    return found as Extract<Request, { op: K }>;
  }

  /** Answers the next request of `op` (that `where` accepts) with `result`; returns that request. */
  async answer<K extends WebviewOp>(
    op: K,
    result: WebviewOps[K]['result'],
    where?: (request: Extract<Request, { op: K }>) => boolean,
  ): Promise<Extract<Request, { op: K }>> {
    const request = await this.request(op, where);
    this.answered.add(request.id);
    await this.send({ type: 'response', id: request.id, result });
    return request;
  }

  async screenshot(name: string): Promise<void> {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await this.frame();
    await this.page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  }
}
