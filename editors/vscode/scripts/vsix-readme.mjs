// Writes dist/vsix-readme.md, the README inside the .vsix, from README.md: without the
// screenshot (a package without a repository URL cannot link images) and without the
// "Develop" section (for people working on the extension, not using it).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let text = fs.readFileSync(path.join(here, 'README.md'), 'utf8');
text = text.replace(/^!\[[^\]]*\]\([^)]*\)\n\n/m, '');
const develop = text.indexOf('\n## Develop');
if (develop >= 0) text = text.slice(0, develop + 1);
fs.mkdirSync(path.join(here, 'dist'), { recursive: true });
fs.writeFileSync(path.join(here, 'dist', 'vsix-readme.md'), text);
