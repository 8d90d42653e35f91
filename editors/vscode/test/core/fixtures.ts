// The recorded real-CLI streams every client is tested with (tests/data/streams): what a
// client receives for each (<name>.client.jsonl) and the entries its store must end with
// (<name>.entries.json).

import fs from 'node:fs';
import path from 'node:path';
import type { ChannelNotifications, ChatEvent, NotificationEvent } from '../../src/core/chat-state';
import { positionOf, type Entry, type Transcript } from '../../src/core/transcript';

/** The repository's tests/data/streams, from the bundled test in out/test/<dir>/. */
const STREAMS = path.resolve(__dirname, '../../../../../tests/data/streams');

export type StreamName =
  | 'api-error'
  | 'ask-question'
  | 'bash-output'
  | 'edit-denied'
  | 'interrupted'
  | 'plan-approved'
  | 'streamed-thinking'
  | 'sub-agent'
  | 'write-allowed';

/** Every recorded stream's name. */
export function streamNames(): string[] {
  return fs
    .readdirSync(STREAMS)
    .filter((f) => f.endsWith('.client.jsonl'))
    .map((f) => f.slice(0, -'.client.jsonl'.length))
    .sort();
}

/** The notifications a client receives for the stream, in order. */
export function notifications(name: string): NotificationEvent[] {
  return fs
    .readFileSync(path.join(STREAMS, `${name}.client.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const { method, params } = JSON.parse(line) as { method: keyof ChannelNotifications; params: never };
      return { kind: 'notification', method, params };
    });
}

/** The entries a store must end with for the stream. */
export function goldenEntries(name: string): Entry[] {
  return JSON.parse(fs.readFileSync(path.join(STREAMS, `${name}.entries.json`), 'utf8')) as Entry[];
}

/** The events a host emits for the chat: `bound`, then the notifications. */
export function hostEvents(name: StreamName): ChatEvent[] {
  const notes = notifications(name);
  const first = notes.find((n) => n.method === 'claude/status');
  return [
    {
      kind: 'bound',
      channelId: first?.params.channelId ?? 'ch-1',
      sessionId: first?.method === 'claude/status' ? first.params.sessionId : '',
      cwd: '/home/dev/project',
    },
    ...notes,
  ];
}

/** The index of the first event matching `match`; fails when there is none. */
export function indexOf(events: ChatEvent[], match: (e: ChatEvent) => boolean): number {
  const at = events.findIndex(match);
  if (at < 0) throw new Error('no such event in the stream');
  return at;
}

/** `state` with its index (`at` and `shift`: each copy of a chat makes its own) as each entry's
 * position: what two copies must agree on. */
export function withPositions<T extends Transcript>(
  state: T,
): Omit<T, 'at' | 'shift'> & { positions: (number | undefined)[] } {
  const { at, shift, ...rest } = state;
  return { ...rest, positions: state.entries.map((e) => positionOf(state, e.id)) };
}
