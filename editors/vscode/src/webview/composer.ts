// The prompt box: Enter sends, Shift+Enter starts a new line, Escape stops Claude; `@`
// completes workspace files (asked of the host), `/` at the start completes the CLI's
// slash commands; pasted or dropped images go with the message. The draft is kept in the
// page state so it survives the webview being recreated.

import type { ViewContext } from './context';
import { CompletionPopup, type CompletionItem } from './completion';
import { button, h } from './dom';
import { ImageTray } from './images';

/** The browser grows the prompt with its text (Chromium 123+, VS Code 1.90+). */
const SIZES_ITSELF = CSS.supports('field-sizing', 'content');

const FILE_TOKEN = /(^|\s)@([^\s@]*)$/;
const COMMAND_TOKEN = /^\/(\S*)$/;

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly popup: CompletionPopup;
  private readonly images: ImageTray;
  private readonly message = h('div', { class: 'composer-message', attrs: { role: 'alert' } });
  private lookup = 0;
  private lookupTimer: ReturnType<typeof setTimeout> | undefined;
  private sayTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ctx: ViewContext,
    private readonly interrupt: () => void,
    tools: HTMLElement,
  ) {
    this.input = h('textarea', {
      class: 'prompt',
      attrs: {
        rows: '1',
        placeholder: 'Ask Claude…  (@ files, / commands)',
        'aria-label': 'Message to Claude',
        'aria-autocomplete': 'list',
      },
    });
    this.input.value = ctx.view.current.draft;
    this.popup = new CompletionPopup(this.input);
    this.images = new ImageTray((text) => this.say(text));
    const send = button('Send', () => void this.send(), { class: 'send primary', title: 'Send (Enter)' });
    this.el = h(
      'div',
      { class: 'composer' },
      this.popup.el,
      this.images.el,
      h('div', { class: 'prompt-row' }, this.input, send),
      h('div', { class: 'composer-tools' }, tools),
      this.message,
    );
    this.input.addEventListener('keydown', (e) => this.keydown(e));
    this.input.addEventListener('input', () => this.changed());
    this.input.addEventListener('blur', () => this.popup.close());
    this.input.addEventListener('paste', (e) => {
      const files = [...(e.clipboardData?.files ?? [])];
      if (files.length) {
        e.preventDefault();
        void this.images.add(files);
      }
    });
    this.el.addEventListener('dragover', (e) => e.preventDefault());
    this.el.addEventListener('drop', (e) => {
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length) {
        e.preventDefault();
        void this.images.add(files);
      }
    });
    queueMicrotask(() => this.resize());
  }

  focus(): void {
    this.input.focus();
  }

  /** Puts text in the prompt (at the caret); `send` sends the prompt at once. */
  insert(text: string, send: boolean): void {
    const { selectionStart: start, selectionEnd: end, value } = this.input;
    this.input.value = value.slice(0, start) + text + value.slice(end);
    this.input.selectionStart = this.input.selectionEnd = start + text.length;
    this.changed();
    if (send) void this.send();
    else this.focus();
  }

  async send(): Promise<void> {
    const text = this.input.value.trim();
    const images = this.images.blocks;
    if (!text && !images.length) return;
    this.popup.close();
    this.input.value = '';
    this.images.clear();
    this.changed();
    try {
      await this.ctx.request('send', images.length ? { text, images } : { text });
    } catch (e) {
      // Not sent: give the text back rather than lose it.
      if (!this.input.value) this.input.value = text;
      this.changed();
      this.say(`Not sent: ${(e as Error).message}`);
    }
  }

  /** Shows why something was refused or failed, under the prompt, for a few seconds. */
  private say(text: string): void {
    this.message.textContent = text;
    clearTimeout(this.sayTimer);
    this.sayTimer = setTimeout(() => (this.message.textContent = ''), 8000);
  }

  private keydown(e: KeyboardEvent): void {
    if (this.popup.key(e)) return;
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void this.send();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      this.interrupt();
    }
  }

  private changed(): void {
    this.ctx.view.update({ draft: this.input.value });
    this.resize();
    this.complete();
  }

  private resize(): void {
    // Where the browser sizes the prompt to its text (style.css: field-sizing), no script
    // does: measuring it here (height auto, then its scrollHeight) made every key lay out the
    // whole page at once, a long answer streaming in included.
    if (SIZES_ITSELF) return;
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 240)}px`;
  }

  /** Opens, updates or closes the popup for the token before the caret. */
  private complete(): void {
    const before = this.input.value.slice(0, this.input.selectionStart);
    const command = COMMAND_TOKEN.exec(before);
    if (command) {
      const typed = (command[1] ?? '').toLowerCase();
      const items = (this.ctx.info()?.commands ?? [])
        .filter(
          (c) => c.name.toLowerCase().startsWith(typed) || c.aliases?.some((a) => a.toLowerCase().startsWith(typed)),
        )
        .slice(0, 50)
        .map((c) => ({
          label: `/${c.name}`,
          detail: [c.argumentHint, c.description].filter(Boolean).join('  '),
          insert: `/${c.name} `,
        }));
      this.popup.show(items, (item) => this.replaceToken(before.length, item));
      return;
    }
    const file = FILE_TOKEN.exec(before);
    if (!file) {
      this.popup.close();
      return;
    }
    const query = file[2] ?? '';
    const id = ++this.lookup;
    clearTimeout(this.lookupTimer);
    this.lookupTimer = setTimeout(() => {
      this.ctx.request('completeFiles', { query }).then(
        ({ paths }) => {
          // A later keystroke asked again: this answer is stale.
          if (id !== this.lookup) return;
          const items = paths.map((p) => ({ label: p, insert: `@${p} ` }));
          this.popup.show(items, (item) => this.replaceToken(query.length + 1, item));
        },
        () => this.popup.close(),
      );
    }, 60);
  }

  /** Replaces the `length` characters before the caret with the item's text. */
  private replaceToken(length: number, item: CompletionItem): void {
    const caret = this.input.selectionStart;
    const { value } = this.input;
    this.input.value = value.slice(0, caret - length) + item.insert + value.slice(caret);
    this.input.selectionStart = this.input.selectionEnd = caret - length + item.insert.length;
    this.ctx.view.update({ draft: this.input.value });
    this.resize();
    this.popup.close();
  }
}
