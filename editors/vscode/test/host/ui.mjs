// Helpers for a UI-driven run: real code-server + headless Debian Chromium via playwright-core.
//
//   import { startCodeServer, openWorkbench, runCommand, screenshot, closeWorkbench } from './ui.mjs';
//   const cs = await startCodeServer({ extensionVsix: 'x.vsix', workspace: dir, env: { K: 'V' } });
//   const page = await openWorkbench(cs.url);
//   await runCommand(page, 'My Extension: Do Thing');
//   await screenshot(page, 'out/thing.png');
//   await closeWorkbench(page); await cs.stop();
//
// Everything code-server writes (user data, extensions, config, HOME, XDG dirs, TMPDIR) lives in a fresh work
// dir; the server runs in its own process group and stop() kills the whole group.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  freePort,
  launchChromium,
  loadToolchain,
  makeWorkDir,
  sleep,
  spawnGroup,
  waitForPort,
  writeSettings,
} from './common.mjs';

/**
 * Start code-server with one extension installed.
 * opts: extensionVsix (installed with --install-extension) or extensionDir (copied into the extensions dir
 *       as <publisher>.<name>-<version>), workspace (folder to open), env (extra env: reaches the extension
 *       host), settings (extra user settings), toolchain, keepWorkDir, verbose, log.
 * Returns {url, port, workDir, userDataDir, extensionsDir, logFile, server, stop()}.
 */
export async function startCodeServer(opts = {}) {
  const tc = opts.toolchain || loadToolchain();
  const log = opts.log || ((l) => console.error(l));
  const workspace = path.resolve(opts.workspace || '.');
  if (!fs.existsSync(workspace)) throw new Error(`workspace ${workspace} does not exist`);
  const { dir: workDir, env: isoEnv } = makeWorkDir('vscode-ui-');
  const userDataDir = path.join(workDir, 'user-data');
  const extensionsDir = path.join(workDir, 'extensions');
  fs.mkdirSync(extensionsDir, { recursive: true });
  writeSettings(path.join(userDataDir, 'User'), opts.settings || {});
  const configFile = path.join(workDir, 'code-server.yaml');
  fs.writeFileSync(configFile, 'auth: none\ncert: false\n');
  const env = { ...process.env, ...isoEnv, ...(opts.env || {}) };
  delete env.VSCODE_IPC_HOOK_CLI;
  delete env.ELECTRON_RUN_AS_NODE;
  const common = ['--config', configFile, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir];

  if (opts.extensionVsix) {
    const t = Date.now();
    const r = spawnSync(tc.CODE_SERVER, [...common, '--install-extension', path.resolve(opts.extensionVsix)], {
      env,
      cwd: workDir,
      encoding: 'utf8',
      timeout: 180000,
    });
    if (r.status !== 0) {
      throw new Error(
        `code-server --install-extension ${opts.extensionVsix} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`,
      );
    }
    // Which file was installed, to compare with the one built and checked (test/package/vsix.test.ts prints its sha256).
    const bytes = fs.readFileSync(opts.extensionVsix);
    log(
      `[ui] installed ${opts.extensionVsix} (${(bytes.length / 1024).toFixed(1)} KB, sha256 ` +
        `${createHash('sha256').update(bytes).digest('hex')}) in ${Date.now() - t} ms`,
    );
  } else if (opts.extensionDir) {
    const src = path.resolve(opts.extensionDir);
    const pkg = JSON.parse(fs.readFileSync(path.join(src, 'package.json'), 'utf8'));
    const dest = path.join(extensionsDir, `${pkg.publisher}.${pkg.name}-${pkg.version}`.toLowerCase());
    fs.cpSync(src, dest, { recursive: true, dereference: true, filter: (p) => !/\/\.git(\/|$)/.test(p) });
  }

  const port = await freePort();
  const logFile = path.join(workDir, 'code-server.log');
  const server = spawnGroup(
    tc.CODE_SERVER,
    [
      ...common,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--reconnection-grace-time',
      '5',
      '--ignore-last-opened',
      workspace,
    ],
    { env, cwd: workDir, logFile, onLine: opts.verbose ? (l) => log(`[code-server] ${l}`) : undefined },
  );
  try {
    await waitForPort(port, { timeoutMs: 60000, alive: server.isAlive });
  } catch (err) {
    await server.kill();
    throw new Error(
      `${err.message}; log: ${logFile}\n${fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-2000) : ''}`,
      { cause: err },
    );
  }
  const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`;
  let stopped = false;
  const stop = async ({ keepWorkDir = opts.keepWorkDir } = {}) => {
    if (stopped) return;
    stopped = true;
    await server.kill();
    if (!keepWorkDir) fs.rmSync(workDir, { recursive: true, force: true });
  };
  return { url, port, workDir, userDataDir, extensionsDir, logFile, server, stop };
}

/**
 * Launch headless Chromium, open `url` and resolve with the playwright Page once the workbench is ready
 * (workbench, status bar and activity bar rendered). page.consoleLines collects the browser console.
 */
export async function openWorkbench(
  url,
  { toolchain, timeoutMs = 60000, viewport = { width: 1280, height: 800 }, webviewSite = false } = {},
) {
  const tc = toolchain || loadToolchain();
  // A page the bench serves (webviewSite) has no address: Chromium's local network access
  // checks would then refuse its connections to code-server on this machine.
  const browser = await launchChromium(tc, {
    args: webviewSite ? ['--disable-features=LocalNetworkAccessChecks'] : [],
  });
  try {
    const page = await browser.newPage({ viewport });
    page.consoleLines = [];
    page.on('console', (m) => page.consoleLines.push(`${m.type()}: ${m.text()}`));
    if (webviewSite) await serveWebviewsCrossSite(page, url);
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: timeoutMs });
    await page.waitForSelector('.monaco-workbench .part.activitybar, .monaco-workbench .activitybar', {
      timeout: timeoutMs,
    });
    return page;
  } catch (err) {
    await browser.close().catch(() => {});
    throw err;
  }
}

/**
 * Serves the workbench's webviews from a site of their own (`localhost` where the workbench
 * is on 127.0.0.1), as VS Code desktop (a `vscode-webview://` origin per webview) and
 * vscode.dev (`*.vscode-cdn.net`) do; code-server serves them from its own origin. Chromium
 * then runs them in a renderer process of their own (site isolation): their thread is not
 * the workbench's, as in those. code-server gives the webviews' address in the workbench
 * page's configuration (webviewEndpoint, relative to the page): the page is rewritten with
 * the same path on the other site.
 */
async function serveWebviewsCrossSite(page, url) {
  const workbench = new URL(url);
  // A host of its own per webview, as vscode.dev's: its page checks that its name is the hash
  // VS Code puts for {{uuid}} (Chromium takes any *.localhost for this machine).
  const other = `${workbench.protocol}//{{uuid}}.localhost:${workbench.port}`;
  const others = `${workbench.protocol}//*.localhost:${workbench.port}`;
  await page.route(
    (u) => u.origin === workbench.origin && (u.pathname === '/' || u.pathname === workbench.pathname),
    async (route) => {
      const response = await route.fetch();
      const html = await response.text();
      const rewritten = html.replace(
        /(webviewEndpoint&quot;:&quot;)\/?(?!https?:)/,
        (_, key) => `${key}${other}${workbench.pathname.replace(/\/?$/, '/')}`,
      );
      if (rewritten === html) throw new Error('the workbench page gives no webviewEndpoint to rewrite');
      // Its policy lets it frame its own origin and vscode-cdn.net's (vscode.dev's webviews): the other site too.
      const headers = { ...response.headers() };
      const policy = headers['content-security-policy'];
      if (policy) {
        headers['content-security-policy'] = policy.replace(/(frame-src|child-src) /g, `$1 ${others} `);
      }
      await route.fulfill({ response, body: rewritten, headers });
    },
  );
}

/** The webviews that run in a renderer process of their own (out-of-process frames on the
 * site openWorkbench's webviewSite serves them from): their CDP targets. */
export async function webviewRenderers(page) {
  const cdp = await page.context().newCDPSession(page);
  const { targetInfos } = await cdp.send('Target.getTargets');
  await cdp.detach();
  return targetInfos.filter((t) => t.type === 'iframe' && /^https?:\/\/[a-z0-9]+\.localhost:/.test(t.url));
}

export async function closeWorkbench(page) {
  await page
    ?.context()
    .browser()
    ?.close()
    .catch(() => {});
}

/**
 * Run a command by its palette title through F1. The first F1 after load is sometimes swallowed (keybindings
 * not ready yet), so the palette is re-opened until it shows (attempts x ~3 s).
 */
export async function runCommand(
  page,
  title,
  { attempts = 5, rowTimeoutMs = 10000, debug = !!process.env.VSCODE_HOST_DEBUG } = {},
) {
  const t0 = Date.now();
  const dbg = (m) => {
    if (debug) console.error(`[runCommand +${Date.now() - t0} ms] ${m}`);
  };
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('input').first();
  let lastErr;
  for (let i = 0; i < attempts; i++) {
    try {
      await page
        .locator('.monaco-workbench')
        .click({ position: { x: 640, y: 400 }, timeout: 2000 })
        .catch(() => {});
      await page.keyboard.press('F1');
      await widget.waitFor({ state: 'visible', timeout: 3000 });
      // Contributed commands appear in the palette only once the extension host has registered the
      // extensions, which can be a few seconds after the workbench renders: re-query until the entry shows.
      const row = widget.locator('.monaco-list-row.focused');
      // The palette may rank another entry first ("Preferences: Browse Color Themes..." above
      // "Preferences: Color Theme"): then the entry is picked with the mouse.
      const lower = widget.locator('.monaco-list-row', { hasText: title }).first();
      const deadline = Date.now() + rowTimeoutMs;
      let refill = 0;
      let pick = null;
      for (;;) {
        if (Date.now() >= refill) {
          await input.fill('');
          await input.fill(`>${title}`);
          refill = Date.now() + 700;
        }
        await sleep(100);
        const label =
          (await row
            .first()
            .getAttribute('aria-label', { timeout: 300 })
            .catch(() => null)) || '';
        if (label.toLowerCase().includes(title.toLowerCase())) {
          pick = () => page.keyboard.press('Enter');
          break;
        }
        if (await lower.isVisible().catch(() => false)) {
          pick = () => lower.click();
          break;
        }
        if (Date.now() > deadline) throw new Error(`no palette entry for "${title}" (focused row: "${label}")`);
        if (!(await widget.isVisible())) throw new Error('palette closed');
      }
      dbg(`attempt ${i + 1}: found "${title}"`);
      await pick();
      await widget.waitFor({ state: 'hidden', timeout: 3000 }).catch(() => {});
      return;
    } catch (err) {
      lastErr = err;
      dbg(`attempt ${i + 1} failed: ${err.message.split('\n')[0]}`);
      await page.keyboard.press('Escape').catch(() => {});
      await sleep(500);
    }
  }
  throw new Error(`runCommand("${title}") failed after ${attempts} attempts: ${lastErr && lastErr.message}`);
}

/** Wait for a notification toast whose text matches (string: substring; or RegExp). Returns its text. */
export async function waitForNotification(page, match, { timeoutMs = 15000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  const ok = (t) => (match instanceof RegExp ? match.test(t) : t.includes(match));
  for (;;) {
    const texts = await page
      .locator('.notifications-toasts .notification-toast')
      .allInnerTexts()
      .catch(() => []);
    const hit = texts.find(ok);
    if (hit) return hit;
    if (Date.now() > deadline)
      throw new Error(`no notification matching ${match} within ${timeoutMs} ms (seen: ${JSON.stringify(texts)})`);
    await sleep(200);
  }
}

export async function screenshot(page, file) {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  await page.screenshot({ path: file });
  return file;
}
