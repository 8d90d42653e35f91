// A turn the CLI could not authenticate (no credentials, or a key the API refused): the one
// error the user is shown for it, with the daemon's fix and what its buttons do.

import type { ChatEvent } from './chat-state';

export const SIGN_IN = 'Sign In';
export const API_KEY = 'API Key…';
export const COPY_COMMAND = 'Copy Command';

export interface SignInPrompt {
  /** The notification: what is wrong and both ways to fix it (the daemon's message). */
  text: string;
  /** The buttons, in order. */
  actions: string[];
  /** What `Sign In` runs in a terminal (and `Copy Command` copies): `claude-sidecar login`. */
  command: string | undefined;
  /** What `API Key…` runs in a terminal: the API-key steps for this machine. */
  apiKeyCommand: string | undefined;
}

/** The sign-in prompt for a chat event: the claude/turnEnded of a turn whose error is
 * `authRequired`; undefined for any other event. */
export function signInPrompt(event: ChatEvent): SignInPrompt | undefined {
  if (event.kind !== 'notification' || event.method !== 'claude/turnEnded') return undefined;
  const error = event.params.error;
  if (error?.kind !== 'authRequired') return undefined;
  const how = typeof error.data?.how === 'string' ? error.data.how : undefined;
  return {
    text: `Claude: ${error.message}`,
    actions: how ? [SIGN_IN, API_KEY, COPY_COMMAND] : [],
    command: how,
    apiKeyCommand: how ? `${how} --api-key` : undefined,
  };
}
