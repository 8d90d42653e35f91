// VS Code's own diff editor for the agent's changes: a file update (before / after) and a
// pending edit (the file now / what the edit would make of it). The texts are served from
// memory by a content provider under our own URI scheme, read-only.

import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Chat } from '../core/chat';
import { editedPath, proposedContent } from '../core/proposed-edit';

export const DIFF_SCHEME = 'claude-sidecar';

/** Texts the diff editors show, by URI path; dropped when their documents close. */
export class DiffContents implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private next = 1;
  private readonly closing: vscode.Disposable;

  constructor() {
    this.closing = vscode.workspace.onDidCloseTextDocument((d) => {
      if (d.uri.scheme === DIFF_SCHEME) this.texts.delete(keyOf(d.uri));
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(keyOf(uri)) ?? '';
  }

  /**
   * A URI serving `text` at the path of `file` itself (told apart by its query): a multi-file
   * diff shows the file as changed, not as renamed from a path of ours.
   */
  uriAt(file: vscode.Uri, label: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: DIFF_SCHEME, path: file.path, query: `${label}-${this.next++}` });
    this.texts.set(keyOf(uri), text);
    return uri;
  }

  /** A URI serving `text`, named like `file` (so the editor picks its language). */
  uriFor(file: string, label: string, text: string): vscode.Uri {
    const key = `/${this.next++}/${label}/${path.basename(file)}`;
    this.texts.set(key, text);
    return vscode.Uri.from({ scheme: DIFF_SCHEME, path: key });
  }

  dispose(): void {
    this.closing.dispose();
    this.texts.clear();
  }
}

/** Where DiffContents keeps a URI's text: its path, and its query when it has one. */
function keyOf(uri: vscode.Uri): string {
  return uri.query ? `${uri.path}?${uri.query}` : uri.path;
}

/** Opens the before/after of one file update of the chat (by its notification seq) in `column`. */
export async function openFileUpdate(
  contents: DiffContents,
  chat: Chat,
  seq: number,
  column: vscode.ViewColumn,
): Promise<void> {
  const update = chat.fileContents.get(seq);
  if (!update) throw new Error('that change is no longer kept: open the file instead');
  const name = path.basename(update.path);
  if (update.oldContent === null && update.newContent === null) {
    await vscode.window.showTextDocument(vscode.Uri.file(update.path), { viewColumn: column });
    return;
  }
  const before = contents.uriFor(update.path, 'before', update.oldContent ?? '');
  const after = contents.uriFor(update.path, 'after', update.newContent ?? '');
  await vscode.commands.executeCommand('vscode.diff', before, after, `${name} (Claude's change)`, {
    preview: true,
    viewColumn: column,
  });
}

/** Opens a pending edit as a diff of the file now and the file as the edit would leave it, in `column`. */
export async function reviewPendingEdit(
  contents: DiffContents,
  chat: Chat,
  requestId: string,
  column: vscode.ViewColumn,
): Promise<vscode.Uri> {
  const request = chat.permissionRequests.get(requestId);
  if (!request) throw new Error('that permission request is no longer pending');
  const file = editedPath(request.toolName, request.input);
  if (!file) throw new Error(`${request.toolName} does not edit a file`);
  let current: string | null;
  try {
    current = await fs.readFile(file, 'utf8');
  } catch {
    current = null;
  }
  const proposed = proposedContent(request.toolName, request.input, current);
  const left = current === null ? contents.uriFor(file, 'missing', '') : vscode.Uri.file(file);
  const right = contents.uriFor(file, 'proposed', proposed);
  await vscode.commands.executeCommand(
    'vscode.diff',
    left,
    right,
    `${path.basename(file)} (proposed by Claude: allow or deny in the chat)`,
    { preview: true, viewColumn: column },
  );
  return right;
}

/** Closes the diff editors showing `uri` (a proposal that was decided, or withdrawn). */
export async function closeDiffsOf(uri: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) =>
    g.tabs.filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === uri.toString()),
  );
  if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
}
