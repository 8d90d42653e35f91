// The .vsix `npm run package` made (dist/claude-sidecar.vsix), opened as the Visual Studio
// Marketplace and Open VSX open it, against what they require of a package: its identity, a
// license file (Open VSX refuses an extension without one), a PNG icon (no SVG), https links to
// its repository, a README and a CHANGELOG, listing fields within the stores' limits (Open VSX's
// ExtensionValidator: 255 characters, a 2048-character description, no control characters; the
// Marketplace: at most 30 tags, VS Code's categories), and nothing packed that does not run.
// The UI runs (test/vscode/ui*.mjs) install this same file; its size and sha256 are printed here
// and there.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import yauzl from 'yauzl';

const HERE = path.resolve(__dirname, '../../..'); // out/test/package -> editors/vscode
const ROOT = path.resolve(HERE, '../..');
const VSIX = path.join(HERE, 'dist', 'claude-sidecar.vsix');

// VS Code's extension categories (EXTENSION_CATEGORIES in VS Code 1.139, the version the UI runs
// use); the Marketplace files an extension under these only.
const CATEGORIES = [
  'AI',
  'Azure',
  'Chat',
  'Data Science',
  'Debuggers',
  'Extension Packs',
  'Education',
  'Formatters',
  'Keymaps',
  'Language Packs',
  'Linters',
  'Machine Learning',
  'Notebooks',
  'Programming Languages',
  'SCM Providers',
  'Snippets',
  'Testing',
  'Themes',
  'Visualization',
  'Other',
];
// vsce's rule for a name and a publisher, and Open VSX's for a name and a namespace.
const VSCE_NAME = /^[a-z0-9][a-z0-9-]*$/i;
const OPENVSX_NAME = /^[\w\-+$~]+$/;
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

interface Manifest {
  name: string;
  publisher: string;
  version: string;
  displayName: string;
  description: string;
  license: string;
  private?: boolean;
  icon: string;
  main: string;
  engines: { vscode: string };
  categories: string[];
  keywords: string[];
  activationEvents: string[];
  galleryBanner: { color: string; theme: string };
  repository: { type: string; url: string };
  bugs: { url: string };
  homepage: string;
}

function readZip(file: string): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const entries = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (err2, stream) => {
          if (err2) return reject(err2);
          const chunks: Uint8Array[] = [];
          stream.on('data', (c: Uint8Array) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            entries.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/** A PNG's width and height, from its IHDR chunk (which the format puts first). */
function pngSize(png: Buffer): { width: number; height: number } {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG signature');
  assert.equal(png.toString('latin1', 12, 16), 'IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** A URL as Open VSX accepts it (absolute, with a host) and the Marketplace links it (https). */
function assertHttpsUrl(value: string, field: string): void {
  const url = new URL(value);
  assert.equal(url.protocol, 'https:', `${field} is https: ${value}`);
  assert.ok(url.host, `${field} has a host: ${value}`);
  assert.ok(value.length <= 255, `${field} fits Open VSX's 255 characters`);
}

/** No control, format or private-use characters (Open VSX refuses them in its listing fields). */
function assertPlainText(value: string, field: string): void {
  assert.doesNotMatch(value, /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\u2028\u2029]/u, `${field} has only plain characters`);
}

describe('the .vsix as the Marketplace and Open VSX take it', () => {
  let files: Map<string, Buffer>;
  let manifest: Manifest;
  let xml: string;
  const text = (name: string): string => {
    const data = files.get(name);
    assert.ok(data, `${name} is in the package`);
    return data.toString('utf8');
  };
  const asset = (type: string): string => {
    const m = new RegExp(`<Asset Type="${type.replace(/\./g, '\\.')}" Path="([^"]+)"`).exec(xml);
    assert.ok(m?.[1], `extension.vsixmanifest has a ${type} asset`);
    return m[1];
  };
  const property = (id: string): string | undefined =>
    new RegExp(`<Property Id="${id.replace(/\./g, '\\.')}" Value="([^"]*)"`).exec(xml)?.[1];

  before(async () => {
    assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run \`npm run package\` first`);
    files = await readZip(VSIX);
    manifest = JSON.parse(text('extension/package.json')) as Manifest;
    xml = text('extension.vsixmanifest');
    const bytes = new Uint8Array(fs.readFileSync(VSIX));
    const unpacked = [...files.values()].reduce((n, b) => n + b.length, 0);
    console.log(
      `dist/claude-sidecar.vsix: ${files.size} files, ${(bytes.length / 1024).toFixed(1)} KB ` +
        `(${(unpacked / 1024).toFixed(1)} KB unpacked), sha256 ${createHash('sha256').update(bytes).digest('hex')}`,
    );
    for (const [name, data] of files) console.log(`  ${name} ${data.length}`);
  });

  it('has the identity the stores publish it under: name, publisher, version and engine', () => {
    for (const field of ['name', 'publisher'] as const) {
      assert.match(manifest[field], VSCE_NAME, `${field} as vsce takes it`);
      assert.match(manifest[field], OPENVSX_NAME, `${field} as Open VSX takes it`);
    }
    assert.match(manifest.version, SEMVER);
    assert.match(manifest.engines.vscode, /^\^\d+\.\d+\.\d+$/);
    assert.equal(manifest.private, undefined, 'not marked private');
    const identity = /<Identity [^>]*Id="([^"]+)" Version="([^"]+)" Publisher="([^"]+)"/.exec(xml);
    assert.deepEqual(identity?.slice(1), [manifest.name, manifest.version, manifest.publisher]);
    assert.equal(property('Microsoft.VisualStudio.Code.Engine'), manifest.engines.vscode);
  });

  it("carries the repository's MIT license as a file (Open VSX refuses an extension without one)", () => {
    assert.equal(manifest.license, 'MIT');
    const license = asset('Microsoft.VisualStudio.Services.Content.License');
    assert.equal(/<License>([^<]+)<\/License>/.exec(xml)?.[1], license);
    assert.equal(text(license), fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'));
    assert.match(text(license), /^MIT License\n\nCopyright \(c\) \d{4} /);
  });

  it('has a PNG icon of at least 128x128 (the stores take no SVG icon)', () => {
    assert.match(manifest.icon, /\.png$/);
    const icon = `extension/${manifest.icon}`;
    assert.equal(/<Icon>([^<]+)<\/Icon>/.exec(xml)?.[1], icon);
    assert.equal(asset('Microsoft.VisualStudio.Services.Icons.Default'), icon);
    const png = files.get(icon);
    assert.ok(png, `${icon} is in the package`);
    const { width, height } = pngSize(png);
    assert.equal(width, height, 'square');
    assert.ok(width >= 128, `${width}x${height} is at least 128x128`);
  });

  it('links its repository, its issues and its homepage over https', () => {
    assert.equal(manifest.repository.type, 'git');
    assertHttpsUrl(manifest.repository.url, 'repository.url');
    assertHttpsUrl(manifest.bugs.url, 'bugs.url');
    assertHttpsUrl(manifest.homepage, 'homepage');
    for (const link of ['Source', 'GitHub', 'Support', 'Learn']) {
      const value = property(`Microsoft.VisualStudio.Services.Links.${link}`);
      assert.ok(value, `the ${link} link`);
      assertHttpsUrl(value, `the ${link} link`);
    }
  });

  it('shows a README and a CHANGELOG on its store page, with no relative link or SVG image', () => {
    const readme = text(asset('Microsoft.VisualStudio.Services.Content.Details'));
    assert.match(readme, /^# Claude Sidecar for VS Code\n/);
    assert.match(readme, /^## Install$/m);
    assert.doesNotMatch(readme, /^## Develop$/m, "the README's part for developers is left out");
    const changelog = text(asset('Microsoft.VisualStudio.Services.Content.Changelog'));
    assert.match(changelog, /^# Changelog\n/);
    const versions = [...changelog.matchAll(/^## (\S+)/gm)].map((m) => m[1]);
    assert.ok(
      versions.includes(manifest.version) || versions[0] === 'Unreleased',
      `the changelog has this version (${manifest.version}) or what is not released yet: ${versions.join(', ')}`,
    );
    const docs: [string, string][] = [
      ['README', readme],
      ['CHANGELOG', changelog],
    ];
    for (const [name, doc] of docs) {
      for (const [, image, link] of doc.matchAll(/(!?)\[(?:[^\]]|\][^(])*\]\(([^)\s]+)/g)) {
        if (link?.startsWith('#')) continue;
        assertHttpsUrl(link ?? '', `a link of the ${name}`);
        if (image) assert.doesNotMatch(link ?? '', /\.svg$/i, `an image of the ${name} is no SVG`);
      }
    }
  });

  it("keeps its listing within the stores' rules: names, description, categories, tags, banner", () => {
    assert.ok(manifest.displayName && manifest.displayName.length <= 255);
    assert.ok(manifest.description && manifest.description.length <= 2048);
    assertPlainText(manifest.displayName, 'displayName');
    assertPlainText(manifest.description, 'description');
    assert.ok(manifest.categories.length > 0);
    for (const c of manifest.categories) assert.ok(CATEGORIES.includes(c), `${c} is one of VS Code's categories`);
    for (const k of manifest.keywords) {
      assertPlainText(k, 'a keyword');
      assert.ok(k.length <= 255);
    }
    // The Marketplace counts the tags vsce writes (the keywords and those it adds, such as
    // `keybindings`), not those starting with `__`.
    const tags = (/<Tags>([^<]*)<\/Tags>/.exec(xml)?.[1] ?? '').split(',').filter((t) => t && !t.startsWith('__'));
    assert.ok(tags.length <= 30, `${tags.length} tags, at most 30: ${tags.join(', ')}`);
    assert.match(manifest.galleryBanner.color, /^#[0-9a-f]{6}$/i);
    assert.ok(['dark', 'light'].includes(manifest.galleryBanner.theme));
  });

  it('starts only when a chat is opened: no "*" or start-up activation', () => {
    for (const event of manifest.activationEvents) {
      assert.notEqual(event, '*');
      assert.notEqual(event, 'onStartupFinished');
    }
  });

  it('packs only what runs and what the stores show: no sources, tests, maps or node_modules', () => {
    const allowed = new Set([
      '[Content_Types].xml',
      'extension.vsixmanifest',
      'extension/package.json',
      'extension/readme.md',
      'extension/changelog.md',
      'extension/LICENSE.txt',
      `extension/${manifest.icon}`,
      'extension/media/claude.svg', // the chat tab's icon
      `extension/${path.posix.normalize(manifest.main)}`,
      'extension/dist/webview.js',
      'extension/dist/highlight.js',
      'extension/dist/webview.css',
    ]);
    assert.deepEqual([...files.keys()].filter((f) => !allowed.has(f)).sort(), [], 'nothing else is packed');
    assert.deepEqual([...allowed].filter((f) => !files.has(f)).sort(), [], 'nothing is missing');
  });
});
