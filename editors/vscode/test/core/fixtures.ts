// The notification sequences recorded from the real daemon, CLI and stand-in model
// (tests/conversation/record_streams.py), replayed as the host would emit them.

import fs from 'node:fs';
import path from 'node:path';
import type { ClaudeNotifications } from '../../src/core/protocol.generated';
import type { ChatEvent, NotificationEvent } from '../../src/core/transcript';

export type FixtureName =
  | 'streamed-thinking'
  | 'write-allowed'
  | 'edit-denied'
  | 'interrupted'
  | 'ask-question'
  | 'bash-output'
  | 'api-error'
  | 'plan-approved'
  | 'sub-agent';

/** The repository's tests/data/streams, from the bundled test in out/test/<dir>/. */
const FIXTURES = path.resolve(__dirname, '../../../../../tests/data/streams');

/** The recorded notifications of one chat, in order. */
export function notifications(name: FixtureName): NotificationEvent[] {
  return fs
    .readFileSync(path.join(FIXTURES, `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const { method, params } = JSON.parse(line) as { method: keyof ClaudeNotifications; params: never };
      return { kind: 'notification', method, params };
    });
}

type Json = Record<string, unknown>;

function cliMessage(event: ChatEvent): Json | null {
  return event.kind === 'notification' && event.method === 'claude/message' ? event.params.message : null;
}

/**
 * The events a host emits for the chat: `bound` first, then the notifications, with each
 * prompt's `userMessage` where claude/sendMessage returns (just before the CLI queues it).
 */
export function hostEvents(name: FixtureName): ChatEvent[] {
  const notes = notifications(name);
  const first = notes[0]?.params;
  const events: ChatEvent[] = [
    {
      kind: 'bound',
      channelId: first?.channelId ?? 'ch-1',
      sessionId: 'sessionId' in (first ?? {}) ? String((first as Json).sessionId) : '',
      cwd: '/home/dev/project',
    },
    ...notes,
  ];
  for (const replay of notes.map(cliMessage)) {
    if (replay?.type !== 'user' || replay.isReplay !== true) continue;
    const messageId = String(replay.uuid);
    const content = (replay.message as { content: { type: string; text?: string }[] }).content;
    const text = content
      .filter((b) => b.type === 'text')
      .map((b) => b.text ?? '')
      .join('\n');
    const queued = events.findIndex((e) => {
      const m = cliMessage(e);
      return (m?.type === 'command_lifecycle' && m.command_uuid === messageId) || m === replay;
    });
    events.splice(queued, 0, { kind: 'userMessage', messageId, text, images: 0 });
  }
  return events;
}

/** The CLI messages of a fixture of one `type`. */
export function messagesOf(name: FixtureName, type: string): Json[] {
  return notifications(name)
    .map(cliMessage)
    .filter((m): m is Json => m?.type === type);
}
