// npm run package: dist/claude-sidecar.vsix, as the Marketplace and Open VSX take it.
//  1. the production bundles (esbuild --production);
//  2. the package's README and CHANGELOG (scripts/vsix-docs.mjs) into dist/;
//  3. the repository's LICENSE copied beside package.json for the time of packaging (vsce takes
//     the license only from the extension's folder; git keeps the one copy at the root);
//  4. vsce package, with the license and the repository it requires (no --skip-license, no
//     --allow-missing-repository), relative links of the README made absolute against the
//     extension's folder in the repository (vsce does not read `repository.directory`).
// Any warning of vsce fails the packaging: its warnings are the ones that ask "Do you want to
// continue?", and stdin is closed, so such a question is answered no.
// test/package/vsix.test.ts checks the result against the stores' rules (npm test runs it).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { vsixChangelog, vsixReadme } from './vsix-docs.mjs';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.resolve(HERE, '..', '..');
const DIST = path.join(HERE, 'dist');
const OUT = path.join(DIST, 'claude-sidecar.vsix');

function run(cmd, args, { check } = {}) {
  const r = spawnSync(cmd, args, { cwd: HERE, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${r.status ?? r.signal})`);
  check?.(`${r.stdout}\n${r.stderr}`);
}

const manifest = JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8'));
const repo = manifest.repository.url.replace(/\.git$/, '');
const dir = manifest.repository.directory;

run(process.execPath, ['esbuild.mjs', '--production']);
fs.mkdirSync(DIST, { recursive: true });
const readme = path.join(DIST, 'vsix-readme.md');
const changelog = path.join(DIST, 'vsix-changelog.md');
fs.writeFileSync(readme, vsixReadme(fs.readFileSync(path.join(HERE, 'README.md'), 'utf8')));
fs.writeFileSync(
  changelog,
  vsixChangelog(fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8'), `${repo}/blob/HEAD`),
);
const license = path.join(HERE, 'LICENSE');
fs.copyFileSync(path.join(ROOT, 'LICENSE'), license);
try {
  fs.rmSync(OUT, { force: true });
  run(
    path.join(HERE, 'node_modules', '.bin', 'vsce'),
    [
      'package',
      '--no-dependencies',
      '--readme-path',
      path.relative(HERE, readme),
      '--changelog-path',
      path.relative(HERE, changelog),
      '--baseContentUrl',
      `${repo}/blob/HEAD/${dir}`,
      '--baseImagesUrl',
      `${repo}/raw/HEAD/${dir}`,
      '--out',
      path.relative(HERE, OUT),
    ],
    {
      check: (output) => {
        const warnings = output.split('\n').filter((l) => /WARNING/.test(l));
        if (warnings.length) throw new Error(`vsce warned (a store would too):\n${warnings.join('\n')}`);
      },
    },
  );
} finally {
  fs.rmSync(license, { force: true });
}
