#!/usr/bin/env node
// Run VS Code extension tests inside code-server's bundled VS Code server (the "extension-test route" of
// /work/shared/design/toolchains.md) -- what @vscode/test-electron does, without downloading VS Code.
//
//   node run-extension-tests.mjs --extension DIR --tests DIR_OR_FILE --workspace DIR
//        [--env K=V ...] [--timeout S] [--screenshot-dir DIR] [--verbose] [--keep-workdir]
//
// --tests is the compiled test index: a CommonJS file (or a directory with index.js; .mjs / "type":"module"
// is loaded as ESM) exporting run(testsRoot, cb?) -> Promise<void>. Resolves -> exit 0, rejects/throws -> 1,
// cb(err, failures) form also accepted (failures > 0 -> 1). It may live outside --extension; require('vscode')
// works there too. console.* output of the extension host is streamed to stdout (see classifyConsole).
// Exit code: the tests' exit code; 2 on harness errors / timeout; missing toolchain: see common.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  PrerequisiteError,
  exitForPrerequisite,
  freePort,
  launchChromium,
  loadToolchain,
  makeWorkDir,
  parseArgs,
  parseEnvPairs,
  spawnGroup,
  waitForPort,
  writeSettings,
} from './common.mjs';

// How extension-host output reaches us on this route (measured with code-server 4.139.1 / VS Code 1.139.1):
// in "extension tests from CLI" mode the workbench re-logs every console.* call of the extension host through
// its log service, which the browser prints as `%c INFO color: #33f <message>` (WARN / ERR likewise), with no
// "[Extension Host]" label -- so it is mixed with the workbench's own log lines. process.stdout/stderr.write
// of the extension host arrive both there and in the server's stdout (`<pid> text`). console.* does not reach
// the server's stdout at all. We print the log-service lines minus the workbench's known chatter below.
const LOG_SERVICE_LINE = /^%c\s*(TRACE|DEBUG|INFO|WARN|ERR)\s+color: #[0-9a-fA-F]+ ?([^]*)$/;
const WORKBENCH_NOISE = [
  /^Resolv(ing|ed) connection token/,
  /^Creating a socket \(/,
  /^\[reconnection-grace-time\]/,
  /^Updating additional builtin extensions cache/,
  /^\[Service Worker\]/,
  /^\[AgentHost[:\]]/,
  /^\[AccountPolicyGate\]/,
  /ENOTFOUND open-vsx\.org/,
  /^Failed: getaddrinfo ENOTFOUND/,
  /^Canceled: Canceled/,
  /^Error: Timed out waiting for authentication provider/,
  /^Creation of workbench contribution/,
  // Errors whose stack runs through the workbench bundle served over HTTP come from the browser side.
  /\bat .*https?:\/\/[^/\s]+\/stable-[0-9a-f]+\/static\/out\/vs\//,
  /^\[Extension Host\] debugger inspector/,
  /^Started local extension host/,
  /^Ignoring the error while validating/,
];

/**
 * Classify one browser console message: {level, text, fromLogService, noise}.
 * Non-log-service messages (404s, sandbox warnings) are browser chatter.
 */
export function classifyConsole(rawText) {
  const m = LOG_SERVICE_LINE.exec(rawText);
  if (!m) return { level: 'BROWSER', text: rawText, fromLogService: false, noise: true };
  const text = m[2];
  return { level: m[1], text, fromLogService: true, noise: WORKBENCH_NOISE.some((re) => re.test(text)) };
}

/**
 * Run one extension test suite. Returns {exitCode, durationMs, workDir, timedOut}.
 * opts: extension, tests, workspace (dirs/paths), env (extra env for server + extension host),
 *       timeoutS (default 300), screenshotDir, settings (extra user settings), verbose,
 *       keepWorkDir, log (line sink, default console.log), toolchain (from loadToolchain()),
 *       onPage (awaited with the playwright Page before the workbench loads: init scripts,
 *       exposed functions), beforeClose (awaited with the Page once the exit code arrived,
 *       before the browser closes: reading what the page measured).
 */
export async function runExtensionTests(opts) {
  const t0 = Date.now();
  const tc = opts.toolchain || loadToolchain();
  const log = opts.log || ((line) => console.log(line));
  const ext = path.resolve(opts.extension);
  const tests = path.resolve(opts.tests);
  const ws = path.resolve(opts.workspace);
  for (const [name, p] of [
    ['--extension', ext],
    ['--tests', tests],
    ['--workspace', ws],
  ]) {
    if (!fs.existsSync(p)) throw new Error(`${name} ${p} does not exist`);
  }
  const { dir: workDir, env: isoEnv } = makeWorkDir('vscode-ext-tests-');
  const serverData = path.join(workDir, 'server-data');
  // The bundled server keeps user settings server-side under <server-data-dir>/data/User (code-server layout).
  writeSettings(path.join(serverData, 'data', 'User'), opts.settings || {});
  writeSettings(path.join(serverData, 'data', 'Machine'), opts.settings || {});
  const port = await freePort();
  const env = { ...process.env, ...isoEnv, ...(opts.env || {}) };
  delete env.VSCODE_IPC_HOOK_CLI;
  delete env.ELECTRON_RUN_AS_NODE;
  const serverLog = path.join(workDir, 'server.log');
  const server = spawnGroup(
    tc.NODE24,
    [
      tc.VSCODE_SERVER_MAIN,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--without-connection-token',
      '--accept-server-license-terms',
      '--telemetry-level',
      'off',
      '--enable-smoke-test-driver',
      '--disable-workspace-trust',
      '--server-data-dir',
      serverData,
      '--extensions-dir',
      path.join(workDir, 'extensions'),
      '--reconnection-grace-time',
      '5',
    ],
    { env, cwd: workDir, logFile: serverLog, onLine: opts.verbose ? (l) => log(`[server] ${l}`) : undefined },
  );

  let browser;
  let exitCode = 2;
  let timedOut = false;
  let timer;
  let stopping = false;
  try {
    await waitForPort(port, { timeoutMs: 60000, alive: server.isAlive });
    const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(ext)],
      ['extensionTestsPath', remote(tests)],
    ];
    const url =
      `http://127.0.0.1:${port}/?folder=${encodeURIComponent(remote(ws))}` +
      `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    browser = await launchChromium(tc);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    let resolveExit;
    const exited = new Promise((r) => {
      resolveExit = r;
    });
    let testsDone = false; // after the exit code arrives only shutdown chatter follows: stop streaming
    await page.exposeFunction('codeAutomationExit', (code /* , logs */) => {
      testsDone = true;
      resolveExit(Number(code));
    });
    page.on('console', (msg) => {
      const c = classifyConsole(msg.text());
      if (opts.verbose) log(`[console ${c.level}] ${c.text}`);
      else if (!c.noise && !testsDone) log(c.level === 'INFO' ? c.text : `${c.level} ${c.text}`);
    });
    if (opts.onPage) await opts.onPage(page);
    page.on('pageerror', (err) => {
      if (opts.verbose) log(`[page error] ${err.message}`);
    });
    const timeoutMs = (opts.timeoutS ?? 300) * 1000;
    const timeout = new Promise((r) => {
      timer = setTimeout(() => {
        timedOut = true;
        r(2);
      }, timeoutMs);
    });
    const serverDied = server.exited.then(({ code, signal }) => {
      if (stopping) return 2;
      log(`run-extension-tests: server exited early (code ${code}, signal ${signal}); log: ${serverLog}`);
      return 2;
    });
    await page.goto(url);
    exitCode = await Promise.race([exited, timeout, serverDied]);
    if (timedOut) log(`run-extension-tests: TIMEOUT after ${opts.timeoutS ?? 300} s`);
    if (opts.beforeClose && !timedOut) await opts.beforeClose(page);
    if (opts.screenshotDir) {
      fs.mkdirSync(opts.screenshotDir, { recursive: true });
      const file = path.join(opts.screenshotDir, `extension-tests-${timedOut ? 'timeout' : `exit-${exitCode}`}.png`);
      await page.screenshot({ path: file }).then(
        () => log(`run-extension-tests: screenshot ${file}`),
        () => {},
      );
    }
  } finally {
    clearTimeout(timer);
    stopping = true;
    await browser?.close().catch(() => {});
    await server.kill();
    if (exitCode === 0 && !opts.keepWorkDir) fs.rmSync(workDir, { recursive: true, force: true });
    else log(`run-extension-tests: work dir kept: ${workDir} (server log: ${serverLog})`);
  }
  return { exitCode, timedOut, durationMs: Date.now() - t0, workDir };
}

async function main() {
  const spec = {
    extension: 'str',
    tests: 'str',
    workspace: 'str',
    env: 'list',
    timeout: 'str',
    'screenshot-dir': 'str',
    verbose: 'bool',
    'keep-workdir': 'bool',
  };
  let args;
  try {
    args = parseArgs(process.argv.slice(2), spec);
    if (args.help) {
      const text = fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n');
      console.log(
        text
          .slice(
            1,
            text.findIndex((l) => l.startsWith('import')),
          )
          .map((l) => l.replace(/^\/\/ ?/, ''))
          .join('\n'),
      );
      return 0;
    }
    for (const k of ['extension', 'tests', 'workspace']) if (!args[k]) throw new Error(`--${k} is required`);
  } catch (err) {
    console.error(`run-extension-tests: ${err.message}`);
    return 2;
  }
  let toolchain;
  try {
    toolchain = loadToolchain();
  } catch (err) {
    if (err instanceof PrerequisiteError) exitForPrerequisite(err, 'VS Code extension tests');
    throw err;
  }
  const res = await runExtensionTests({
    toolchain,
    extension: args.extension,
    tests: args.tests,
    workspace: args.workspace,
    env: parseEnvPairs(args.env),
    timeoutS: args.timeout ? Number(args.timeout) : undefined,
    screenshotDir: args['screenshot-dir'],
    verbose: args.verbose,
    keepWorkDir: args['keep-workdir'],
  });
  console.log(
    `run-extension-tests: exit ${res.exitCode}${res.timedOut ? ' (timeout)' : ''} in ${(res.durationMs / 1000).toFixed(1)} s`,
  );
  return res.exitCode;
}

if (import.meta.url === pathToFileURL(process.argv[1] || '').href) {
  const forward = (sig) => process.on(sig, () => process.exit(130)); // 'exit' handlers kill the server group
  forward('SIGINT');
  forward('SIGTERM');
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`run-extension-tests: ${err.stack || err}`);
      process.exit(2);
    },
  );
}
