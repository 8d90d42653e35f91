// What a file will hold if a pending edit tool is allowed: computed from the tool's input
// and the file as it is now, so an editor can show the change in its own diff view.
// (The daemon's `preview` is the same change as a unified diff.)

/** The edit tools whose result can be shown before they run. */
export const EDIT_TOOLS = new Set(['Write', 'Edit', 'MultiEdit']);

/** The path an edit tool writes, or undefined for other tools. */
export function editedPath(toolName: string, input: Record<string, unknown>): string | undefined {
  if (!EDIT_TOOLS.has(toolName)) return undefined;
  return typeof input.file_path === 'string' ? input.file_path : undefined;
}

function applyEdit(text: string, oldString: unknown, newString: unknown, replaceAll: unknown): string {
  if (typeof oldString !== 'string' || typeof newString !== 'string') {
    throw new Error('the edit has no old_string/new_string');
  }
  if (oldString === '') return newString + text;
  if (!text.includes(oldString)) throw new Error('old_string is not in the file (the tool will fail)');
  return replaceAll === true ? text.split(oldString).join(newString) : text.replace(oldString, () => newString);
}

/**
 * The file's text after the tool would run. `current` is its text now (null: it does
 * not exist). Throws with a reason when the edit cannot apply (the tool would fail too).
 */
export function proposedContent(toolName: string, input: Record<string, unknown>, current: string | null): string {
  switch (toolName) {
    case 'Write':
      if (typeof input.content !== 'string') throw new Error('Write has no content');
      return input.content;
    case 'Edit':
      return applyEdit(current ?? '', input.old_string, input.new_string, input.replace_all);
    case 'MultiEdit': {
      if (!Array.isArray(input.edits)) throw new Error('MultiEdit has no edits');
      let text = current ?? '';
      for (const e of input.edits as Record<string, unknown>[]) {
        text = applyEdit(text, e.old_string, e.new_string, e.replace_all);
      }
      return text;
    }
    default:
      throw new Error(`${toolName} is not an edit tool`);
  }
}
