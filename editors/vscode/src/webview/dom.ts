// A small element builder: the page builds its DOM with it instead of HTML strings, so
// text from the model or a file is never parsed as markup.

type Child = Node | string | null | undefined | false;

export interface Props {
  class?: string;
  text?: string;
  title?: string;
  /** Attributes, e.g. aria-label, role, type, data-*. */
  attrs?: Record<string, string>;
  onClick?: (event: MouseEvent) => void;
}

/** Sets an element's text only when it changes: the page updates once a frame while an
 * answer streams, and an equal text written again is still new layout work for the browser. */
export function setText(el: HTMLElement, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** Hides or shows an element, only when that changes: the same `hidden` written again still
 * restyles it (a style recalculation of its own, when a key or a scroll reads the layout). */
export function setHidden(el: HTMLElement, hidden: boolean): void {
  if (el.hidden !== hidden) el.hidden = hidden;
}

/** Sets a `data-` attribute only when its value changes (as setHidden: a rule may match it). */
export function setData(el: HTMLElement, key: string, value: string): void {
  if (el.dataset[key] !== value) el.dataset[key] = value;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.text !== undefined) el.textContent = props.text;
  if (props.title) el.title = props.title;
  for (const [name, value] of Object.entries(props.attrs ?? {})) el.setAttribute(name, value);
  const onClick = props.onClick;
  if (onClick) el.addEventListener('click', (event) => onClick(event as MouseEvent));
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) el.append(child);
  }
  return el;
}

/** A button (type=button, so it never submits a form). */
export function button(label: string, onClick: (event: MouseEvent) => void, props: Props = {}): HTMLButtonElement {
  const el = h('button', { ...props, text: label, onClick });
  el.type = 'button';
  return el;
}

/** An icon-only button: `label` is what screen readers and the tooltip say. */
export function iconButton(
  icon: string,
  label: string,
  onClick: (event: MouseEvent) => void,
  className = '',
): HTMLButtonElement {
  const el = button(icon, onClick, {
    class: `icon-button ${className}`.trim(),
    title: label,
    attrs: { 'aria-label': label },
  });
  return el;
}

/** `path` relative to `cwd` when it is inside it. */
export function relativePath(path: string, cwd: string | null): string {
  if (cwd && path.startsWith(cwd.endsWith('/') ? cwd : `${cwd}/`)) return path.slice(cwd.length).replace(/^\/+/, '');
  return path;
}

/** A long path cut at the front, so the file's name stays in sight ("…/src/app/main.ts"). */
export function shortPath(path: string, max = 56): string {
  if (path.length <= max) return path;
  const parts = path.split('/');
  let out = parts.pop() ?? path;
  while (parts.length && (parts.at(-1)?.length ?? 0) + out.length + 3 <= max) out = `${parts.pop()}/${out}`;
  return `…/${out}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function formatCost(usd: number): string {
  return usd < 0.01 && usd > 0 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}
