// Renders media/icon.svg into media/icon.png, the icon the Marketplace and Open VSX show (they
// take no SVG): 256x256, transparent outside the rounded square, drawn by headless Chromium.
// Both files are committed; run this after editing the SVG.
//
//   npm run icon                        writes media/icon.png
//   npm run icon -- --preview FILE.png  also a sheet of the icon at 256, 128, 32 and 16 px on a
//                                       light and a dark background, to check that it reads small
//
// Chromium: $CHROMIUM, else Debian's /usr/bin/chromium (scripts/toolchain.sh installs it).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SIZE = 256;
const svg = fs.readFileSync(path.join(HERE, 'media', 'icon.svg'));
const src = `data:image/svg+xml;base64,${svg.toString('base64')}`;
const previewAt = process.argv.indexOf('--preview');
const preview = previewAt >= 0 ? process.argv[previewAt + 1] : undefined;
if (previewAt >= 0 && !preview) throw new Error('--preview needs a file name');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE } });
  await page.setContent(`<body style="margin:0"><img src="${src}" width="${SIZE}" height="${SIZE}"></body>`);
  await page.locator('img').screenshot({ path: path.join(HERE, 'media', 'icon.png'), omitBackground: true });
  console.log(`media/icon.png: ${SIZE}x${SIZE}`);
  if (preview) {
    const row = (background) =>
      `<div style="background:${background};display:flex;gap:16px;align-items:center;padding:8px">` +
      [256, 128, 32, 16].map((s) => `<img src="${src}" width="${s}" height="${s}">`).join('') +
      '</div>';
    await page.setViewportSize({ width: 520, height: 560 });
    await page.setContent(`<body style="margin:0">${row('#fff')}${row('#1e1e1e')}</body>`);
    await page.screenshot({ path: preview, fullPage: true });
    console.log(`preview: ${preview}`);
  }
} finally {
  await browser.close();
}
