// The README and CHANGELOG inside the .vsix (the Marketplace's and Open VSX's extension page and
// its "Changelog" tab), made at package time from the texts kept in git: nothing is written twice.

/** The README of the package: README.md without its "Develop" section (for people working on the extension). */
export function vsixReadme(readme) {
  const develop = readme.indexOf('\n## Develop');
  return develop >= 0 ? readme.slice(0, develop + 1) : readme;
}

// Changes a VS Code user notices: those that name VS Code, or all the clients at once.
const CONCERNS_VSCODE = /\bVS Code\b|\b(every|each|all|the three) clients?\b/i;
// The root changelog's subsections that are for users; "Development" is for people working on the project.
const FOR_USERS = new Set(['Fixed', 'Added', 'Changed', 'Performance', 'Removed', 'Deprecated', 'Security']);

/**
 * The extension's CHANGELOG from the project's (the root CHANGELOG.md): each version's heading, and
 * under it the entries (bullets, or a version's paragraph) that concern VS Code, in the user-facing
 * subsections. Links relative to the repository root become absolute (`blobUrl`: the repository's
 * `.../blob/<ref>`), since the stores resolve relative links against the extension's folder.
 */
export function vsixChangelog(changelog, blobUrl) {
  const versions = []; // {heading, blocks: [{section, text}]}
  let version;
  let section;
  let block;
  const finish = () => {
    if (block && version && CONCERNS_VSCODE.test(block.text.replace(/\s+/g, ' '))) version.blocks.push(block);
    block = undefined;
  };
  for (const line of changelog.split('\n')) {
    if (line.startsWith('## ')) {
      finish();
      version = { heading: line, blocks: [] };
      versions.push(version);
      section = undefined;
    } else if (line.startsWith('### ')) {
      finish();
      section = line.slice(4).trim();
    } else if (!version || line.startsWith('# ')) {
      continue;
    } else if (line.trim() === '') {
      finish();
    } else if (line.startsWith('- ') || !block) {
      finish();
      block = { section, text: line };
    } else {
      block.text += `\n${line}`;
    }
  }
  finish();

  const absolute = (text) =>
    text.replace(/\]\((?![a-z][a-z0-9+.-]*:|#)([^)]+)\)/gi, (_, link) => `](${blobUrl}/${link.replace(/^\.\//, '')})`);
  const out = [
    '# Changelog',
    '',
    `The changes a user of the VS Code extension notices, from the project's [CHANGELOG](${blobUrl}/CHANGELOG.md),`,
    'which also lists those of the daemon and the other editors.',
  ];
  for (const v of versions) {
    const blocks = v.blocks.filter((b) => b.section === undefined || FOR_USERS.has(b.section));
    out.push('', v.heading);
    if (!blocks.length) out.push('', 'No change to the VS Code extension.');
    let shown;
    for (const b of blocks) {
      if (b.section !== undefined && b.section !== shown) out.push('', `### ${b.section}`);
      else if (b.section === undefined || !b.text.startsWith('- ')) out.push('');
      shown = b.section;
      out.push(absolute(b.text));
    }
  }
  return `${out.join('\n')}\n`;
}
