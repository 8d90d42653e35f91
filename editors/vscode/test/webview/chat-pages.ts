// The chat page in a headless browser, for a webview test file.

import { after, afterEach, before } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launch, PageServer, ScriptedHost } from './scripted-host';

/**
 * A page server and a browser for a test file: started before its tests, closed after them.
 * Returns what opens the chat page in a new tab of that browser; each tab is closed after its
 * test (left open, a file's tabs each went on drawing frames and holding their chats: a
 * paging test's has 10,000 entries).
 */
export function chatPages(): (
  viewport?: { width: number; height: number },
  prepare?: (page: Page) => Promise<void>,
) => Promise<ScriptedHost> {
  const server = new PageServer();
  let browser: Browser | undefined;
  const opened: ScriptedHost[] = [];
  before(async () => {
    await server.start();
    browser = await launch();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((host) => host.page.close()));
  });
  after(async () => {
    await browser?.close();
    await server.stop();
  });
  return async (viewport, prepare) => {
    if (!browser) throw new Error('the browser is not running (chatPages() hooks run before the tests)');
    const host = await ScriptedHost.open(browser, server, viewport, prepare);
    opened.push(host);
    return host;
  };
}
