// Bundles the extension (Node, CommonJS, `vscode` external), the chat webview (browser IIFE)
// and the tests (one CommonJS file per test, for `node --test`) and benches.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

function testEntries(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((f) => /\.(test|bench)\.ts$/.test(f) || /(^|\/)index\.ts$/.test(f))
    .map((f) => path.join(dir, f));
}

const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning' };

const builds = [
  {
    ...common,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    ...common,
    // The page's script, and highlight.js apart (src/webview/highlight-worker.ts: the page runs it as a worker).
    entryPoints: { webview: 'src/webview/main.ts', highlight: 'src/webview/highlight-worker.ts' },
    outdir: 'dist',
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    loader: { '.css': 'css' },
  },
  {
    ...common,
    entryPoints: [...testEntries('test/core'), ...testEntries('test/webview'), ...testEntries('test/package')],
    outdir: 'out/test',
    outbase: 'test',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    outExtension: { '.js': '.cjs' },
  },
  {
    ...common,
    entryPoints: testEntries('test/vscode'),
    outdir: 'out/test',
    outbase: 'test',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
].filter((b) => (Array.isArray(b.entryPoints) ? b.entryPoints.length > 0 : true));

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
