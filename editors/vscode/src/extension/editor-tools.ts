// The tools VS Code offers the model (as mcp__editor__<name>): what only the editor knows
// (diagnostics, open editors, the selection) or can do (show a file), answered from the
// VS Code API when the daemon sends claude/callEditorTool.

import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EditorToolHandler } from '../core/client';
import type { EditorTool } from '../core/protocol.generated';

export const EDITOR_TOOLS: EditorTool[] = [
  {
    name: 'getDiagnostics',
    description:
      'Errors and warnings VS Code shows (from its language servers and linters) for one file, or for every file with problems when uri is left out. Returns file, line, column, severity, source and message of each.',
    inputSchema: {
      type: 'object',
      properties: { uri: { type: 'string', description: 'file:// URI or absolute path of the file' } },
    },
  },
  {
    name: 'getOpenEditors',
    description:
      'The files open in VS Code editor tabs: path, whether it is the active one, whether it has unsaved changes.',
  },
  {
    name: 'getSelection',
    description:
      "The active editor's file, the selected range (1-based lines) and the selected text (empty: just the cursor).",
  },
  {
    name: 'openFile',
    description: 'Open a file in VS Code to show it to the user, optionally at a 1-based line.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, line: { type: 'integer', minimum: 1 } },
      required: ['path'],
    },
  },
  { name: 'getWorkspaceFolders', description: 'The absolute paths of the folders open in VS Code.' },
];

const SEVERITY = ['error', 'warning', 'information', 'hint'] as const;

// While the user types in the chat, the chat's webview has the focus and VS Code reports no
// active text editor: the editor the user means is the one they used last.
let lastTextEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;

/** Keeps track of the text editor used last; dispose with the extension. */
export function trackLastTextEditor(): vscode.Disposable {
  return vscode.window.onDidChangeActiveTextEditor((editor) => {
    if (editor && editor.document.uri.scheme !== 'output') lastTextEditor = editor;
  });
}

/** The active text editor, or the last one used if it is still open. */
export function currentTextEditor(): vscode.TextEditor | undefined {
  const active = vscode.window.activeTextEditor;
  if (active) return active;
  if (lastTextEditor && !lastTextEditor.document.isClosed) return lastTextEditor;
  return undefined;
}

function toUri(value: string): vscode.Uri {
  return value.startsWith('file:') ? vscode.Uri.parse(value) : vscode.Uri.file(value);
}

function diagnosticsOf(uri: vscode.Uri, list: readonly vscode.Diagnostic[]) {
  return list.map((d) => ({
    file: uri.fsPath,
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    severity: SEVERITY[d.severity],
    source: d.source ?? null,
    message: d.message,
  }));
}

export const EDITOR_TOOL_HANDLERS: Record<string, EditorToolHandler> = {
  getDiagnostics(args) {
    if (args.uri !== undefined && typeof args.uri !== 'string') throw new Error('uri must be a string');
    if (typeof args.uri === 'string') {
      const uri = toUri(args.uri);
      return { diagnostics: diagnosticsOf(uri, vscode.languages.getDiagnostics(uri)) };
    }
    const all = vscode.languages.getDiagnostics().flatMap(([uri, list]) => diagnosticsOf(uri, list));
    return { diagnostics: all };
  },

  getOpenEditors() {
    const active = currentTextEditor()?.document.uri.toString();
    const editors = vscode.window.tabGroups.all.flatMap((group) =>
      group.tabs.flatMap((tab) => {
        const input = tab.input;
        if (!(input instanceof vscode.TabInputText)) return [];
        return [{ path: input.uri.fsPath, active: input.uri.toString() === active, unsaved: tab.isDirty }];
      }),
    );
    return { editors };
  },

  getSelection() {
    const editor = currentTextEditor();
    if (!editor) return { file: null, text: '', start: null, end: null };
    const s = editor.selection;
    return {
      file: editor.document.uri.fsPath,
      text: editor.document.getText(s),
      start: { line: s.start.line + 1, column: s.start.character + 1 },
      end: { line: s.end.line + 1, column: s.end.character + 1 },
    };
  },

  async openFile(args, chat) {
    if (typeof args.path !== 'string' || !args.path) throw new Error('path is required: the file to open');
    const base = chat?.cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
    const file = path.isAbsolute(args.path) ? args.path : path.join(base, args.path);
    const line = typeof args.line === 'number' && args.line >= 1 ? Math.floor(args.line) : undefined;
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(document, {
      preview: true,
      preserveFocus: true,
      selection: new vscode.Range(position, position),
    });
    return `opened ${file}${line ? ` at line ${line}` : ''}`;
  },

  getWorkspaceFolders() {
    return { folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath) };
  },
};
