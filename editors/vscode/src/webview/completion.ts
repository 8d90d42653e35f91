// The popup list of the prompt's completions (@ files, / commands): arrow keys move,
// Enter or Tab picks, Escape closes. The prompt keeps the focus (aria-activedescendant).

import { h, setHidden } from './dom';

export interface CompletionItem {
  label: string;
  detail?: string;
  /** What replaces the typed token. */
  insert: string;
}

export class CompletionPopup {
  readonly el = h('div', {
    class: 'completion',
    attrs: { role: 'listbox', id: 'completion', 'aria-label': 'Completions' },
  });
  private items: CompletionItem[] = [];
  private active = 0;
  private pick: (item: CompletionItem) => void = () => {};

  get open(): boolean {
    return !this.el.hidden;
  }

  constructor(private readonly input: HTMLTextAreaElement) {
    this.el.hidden = true;
    input.setAttribute('aria-controls', 'completion');
  }

  show(items: CompletionItem[], pick: (item: CompletionItem) => void): void {
    this.items = items;
    this.pick = pick;
    this.active = 0;
    if (!items.length) {
      this.close();
      return;
    }
    this.el.replaceChildren(
      ...items.map((item, i) => {
        const row = h(
          'div',
          { class: 'completion-item', attrs: { role: 'option', id: `completion-${i}` } },
          h('span', { class: 'completion-label', text: item.label }),
          item.detail ? h('span', { class: 'completion-detail', text: item.detail }) : null,
        );
        row.addEventListener('mousedown', (e) => {
          e.preventDefault(); // keep the focus in the prompt
          this.choose(i);
        });
        return row;
      }),
    );
    setHidden(this.el, false);
    this.highlight();
  }

  close(): void {
    setHidden(this.el, true);
    this.items = [];
    this.input.removeAttribute('aria-activedescendant');
  }

  /** Handles a key of the prompt; true if the popup used it. */
  key(event: KeyboardEvent): boolean {
    if (!this.open) return false;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const step = event.key === 'ArrowDown' ? 1 : -1;
      this.active = (this.active + step + this.items.length) % this.items.length;
      this.highlight();
    } else if (event.key === 'Enter' || event.key === 'Tab') {
      this.choose(this.active);
    } else if (event.key === 'Escape') {
      this.close();
    } else {
      return false;
    }
    event.preventDefault();
    return true;
  }

  private choose(i: number): void {
    const item = this.items[i];
    this.close();
    if (item) this.pick(item);
  }

  private highlight(): void {
    [...this.el.children].forEach((row, i) => row.setAttribute('aria-selected', String(i === this.active)));
    this.el.children[this.active]?.scrollIntoView({ block: 'nearest' });
    this.input.setAttribute('aria-activedescendant', `completion-${this.active}`);
  }
}
