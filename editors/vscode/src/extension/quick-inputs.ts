// The extension's quick inputs (input boxes, quick picks) that are open now. A chat tab that
// opens while one is (a chat started a moment ago, its CLI just up) must not take the keyboard
// from it: what the user types there would go into the chat's prompt instead.

/** Counts the extension's quick inputs while they are open. */
export class QuickInputs {
  private open = 0;

  /** Whether one of the extension's quick inputs is open now. */
  get showing(): boolean {
    return this.open > 0;
  }

  /** Shows a quick input (`show` resolves when it closes), counted as open until it does. */
  async ask<T>(show: () => Thenable<T>): Promise<T> {
    this.open++;
    try {
      return await show();
    } finally {
      this.open--;
    }
  }
}
