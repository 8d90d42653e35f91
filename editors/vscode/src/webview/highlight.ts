// Code highlighting with highlight.js's common languages (those of highlight.js/lib/common),
// each registered the first time a code block names it. Registering runs the language's
// definition, and lib/common registers all 36 as the page's script is evaluated: about 23 ms
// of the 40 ms that evaluating the page took on the renderer's thread when a chat opens
// (issue 43), for languages most chats never show.

import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import graphql from 'highlight.js/lib/languages/graphql';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import less from 'highlight.js/lib/languages/less';
import lua from 'highlight.js/lib/languages/lua';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import objectivec from 'highlight.js/lib/languages/objectivec';
import perl from 'highlight.js/lib/languages/perl';
import php from 'highlight.js/lib/languages/php';
import phpTemplate from 'highlight.js/lib/languages/php-template';
import plaintext from 'highlight.js/lib/languages/plaintext';
import python from 'highlight.js/lib/languages/python';
import pythonRepl from 'highlight.js/lib/languages/python-repl';
import r from 'highlight.js/lib/languages/r';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import scss from 'highlight.js/lib/languages/scss';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import vbnet from 'highlight.js/lib/languages/vbnet';
import wasm from 'highlight.js/lib/languages/wasm';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

type Definition = Parameters<typeof hljs.registerLanguage>[1];

interface Language {
  define: Definition;
  /** The other names a code block may give it (the definition's own `aliases`: a test keeps them equal). */
  aliases: string[];
  /** The languages it highlights parts of (its modes' `subLanguage`): registered with it. */
  embeds?: string[];
}

/** highlight.js's common languages by name. */
export const LANGUAGES: Readonly<Record<string, Language>> = {
  xml: {
    define: xml,
    aliases: ['html', 'xhtml', 'rss', 'atom', 'xjb', 'xsd', 'xsl', 'plist', 'wsf', 'svg'],
    embeds: ['css', 'javascript'],
  },
  bash: { define: bash, aliases: ['sh', 'zsh'] },
  c: { define: c, aliases: ['h'] },
  cpp: { define: cpp, aliases: ['cc', 'c++', 'h++', 'hpp', 'hh', 'hxx', 'cxx'] },
  csharp: { define: csharp, aliases: ['cs', 'c#'] },
  css: { define: css, aliases: [] },
  markdown: { define: markdown, aliases: ['md', 'mkdown', 'mkd'], embeds: ['xml'] },
  diff: { define: diff, aliases: ['patch'] },
  ruby: { define: ruby, aliases: ['rb', 'gemspec', 'podspec', 'thor', 'irb'] },
  go: { define: go, aliases: ['golang'] },
  graphql: { define: graphql, aliases: ['gql'] },
  ini: { define: ini, aliases: ['toml'] },
  java: { define: java, aliases: ['jsp'] },
  javascript: { define: javascript, aliases: ['js', 'jsx', 'mjs', 'cjs'], embeds: ['css', 'graphql', 'xml'] },
  json: { define: json, aliases: ['jsonc', 'json5'] },
  kotlin: { define: kotlin, aliases: ['kt', 'kts', 'ktm', 'ktx'] },
  less: { define: less, aliases: [] },
  lua: { define: lua, aliases: ['pluto'] },
  makefile: { define: makefile, aliases: ['mk', 'mak', 'make'] },
  perl: { define: perl, aliases: ['pl', 'pm'] },
  objectivec: { define: objectivec, aliases: ['mm', 'objc', 'obj-c', 'obj-c++', 'objective-c++'] },
  php: { define: php, aliases: [] },
  'php-template': { define: phpTemplate, aliases: [], embeds: ['php', 'xml'] },
  plaintext: { define: plaintext, aliases: ['text', 'txt'] },
  python: { define: python, aliases: ['py', 'gyp', 'ipython'] },
  'python-repl': { define: pythonRepl, aliases: ['pycon'], embeds: ['python'] },
  r: { define: r, aliases: [] },
  rust: { define: rust, aliases: ['rs'] },
  scss: { define: scss, aliases: [] },
  shell: { define: shell, aliases: ['console', 'shellsession'], embeds: ['bash'] },
  sql: { define: sql, aliases: [] },
  swift: { define: swift, aliases: [] },
  yaml: { define: yaml, aliases: ['yml'], embeds: ['ruby'] },
  typescript: { define: typescript, aliases: ['ts', 'tsx', 'mts', 'cts'], embeds: ['css', 'graphql', 'xml'] },
  vbnet: { define: vbnet, aliases: ['vb'] },
  wasm: { define: wasm, aliases: [] },
};

/** A language's name by any of its names (lower case, as highlight.js looks them up). */
const named = new Map<string, string>();
for (const [name, { aliases }] of Object.entries(LANGUAGES)) {
  for (const alias of [name, ...aliases]) named.set(alias, name);
}

/** Registers language `name` and those it embeds, unless they are. */
function register(name: string): void {
  if (hljs.getLanguage(name)) return;
  const language = LANGUAGES[name]!;
  hljs.registerLanguage(name, language.define);
  for (const embedded of language.embeds ?? []) register(embedded);
}

/** The language a code block names (`lang`, any of its names), registered; undefined for none of them. */
export function languageNamed(lang: string): string | undefined {
  const name = named.get(lang.toLowerCase());
  if (name) register(name);
  return name;
}

/** The code's HTML highlighted as language `name` (as languageNamed gave it). */
export function highlight(code: string, name: string): string {
  return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
}
