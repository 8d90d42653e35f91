// The chat page in headless Chromium, driven through recorded real chats
// (tests/data/streams) by a scripted host. Screenshots of the key states go to
// test-artifacts/webview/.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContextReading } from '../../src/core/protocol.generated';
import { initialState, reduce, type ChatEvent, type ChatState } from '../../src/core/chat-state';
import type { ConversationEntry, ToolEntry } from '../../src/core/transcript';
import { goldenEntries, hostEvents } from '../core/fixtures';
import { chatPages } from './chat-pages';
import { INFO, type ScriptedHost } from './scripted-host';

const openPage = chatPages();

const CONTEXT: ContextReading = { totalTokens: 23_400, maxTokens: 200_000, percentage: 11.7 };

/** `events` with the daemon's context meter on their claude/turnEnded (the recorded streams
 * predate it). */
function withContext(events: ChatEvent[], context = CONTEXT): ChatEvent[] {
  return events.map((e) =>
    e.kind === 'notification' && e.method === 'claude/turnEnded' ? { ...e, params: { ...e.params, context } } : e,
  );
}

function stateOf(events: ChatEvent[]): ChatState {
  const state = initialState();
  for (const event of events) reduce(state, event);
  return state;
}

/** A unified diff's added and removed lines (what the daemon's stored entries count). */
function diffCounts(diff: string): { added: number; removed: number } {
  const lines = diff.split('\n');
  return {
    added: lines.filter((l) => l.startsWith('+') && !l.startsWith('+++')).length,
    removed: lines.filter((l) => l.startsWith('-') && !l.startsWith('---')).length,
  };
}

/** How many events lead up to the channel waiting for the user's answer (the status included). */
const untilAsked = (events: ChatEvent[]) =>
  events.findIndex(
    (e) => e.kind === 'notification' && e.method === 'claude/status' && e.params.state === 'awaitingPermission',
  ) + 1;

/** The page's coloured code: each highlight's name and the text of each of its ranges, in the
 * order of the page (src/webview/code-colours.ts colours code with ranges, not elements). */
async function colouredCode(page: ScriptedHost['page']): Promise<[string, string][]> {
  return page.evaluate(() => {
    const found: [string, string, Range][] = [];
    for (const [name, highlight] of CSS.highlights) {
      for (const r of highlight) {
        const range = document.createRange();
        range.setStart(r.startContainer, r.startOffset);
        range.setEnd(r.endContainer, r.endOffset);
        found.push([name, range.toString(), range]);
      }
    }
    found.sort((a, b) => a[2].compareBoundaryPoints(Range.START_TO_START, b[2]));
    return found.map(([name, text]): [string, string] => [name, text]);
  });
}

async function openWith(state: ChatState, viewport?: { width: number; height: number }): Promise<ScriptedHost> {
  const host = await openPage(viewport);
  await host.reset(state);
  return host;
}

describe('streaming', () => {
  it('streams thinking then markdown, collapses the thinking when done, ends with the footer', async () => {
    const events = withContext(hostEvents('streamed-thinking'));
    const delta = (kind: string, piece: string) =>
      events.findIndex(
        (e) =>
          e.kind === 'notification' &&
          e.method === 'claude/delta' &&
          e.params.kind === kind &&
          e.params.text.includes(piece),
      );
    const midThinking = delta('thinking', 'e case and i');
    const midText = delta('text', 'str) -> boo');
    const host = await openPage();
    await host.reset(initialState());
    await host.events(events.slice(0, midThinking));
    const page = host.page;
    assert.equal(await page.locator('details.thinking').getAttribute('open'), '', 'thinking is open while it streams');
    assert.match(await page.locator('details.thinking').innerText(), /Thinking…\nThe user wants a function/);
    await host.screenshot('thinking');
    await host.events(events.slice(midThinking, midText));
    assert.equal(await page.locator('details.thinking').getAttribute('open'), null, 'thinking is closed when done');
    assert.match(await page.locator('.entry.text').innerText(), /Here is a small palindrome check/);
    assert.equal(await page.locator('.entry.text.streaming').count(), 1);
    assert.match(await page.locator('.status-line').innerText(), /working/);
    await host.screenshot('streaming');

    await host.events(events.slice(midText));
    await page.waitForFunction(() => CSS.highlights.get('code-keyword')?.size);
    assert.deepEqual((await colouredCode(page))[0], ['code-keyword', 'def']);
    assert.equal(await page.locator('.code-block code span').count(), 0, 'coloured with ranges, not elements');
    assert.equal(await page.locator('.code-block .copy-code').count(), 1);
    assert.match(await page.locator('.entry.turn').innerText(), /Done · .* · \$0\.06/);
    assert.match(await page.locator('.header').innerText(), /12% context/);
    assert.equal(await page.locator('.entry.user').count(), 1, 'the replayed prompt is not shown twice');
    await host.screenshot('answer');
    assert.deepEqual(host.errors, []);
  });

  it('colours the code drawn before highlight.js came once it has run', async () => {
    // dist/highlight.js held back until the answer is drawn (a page may draw before it runs).
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const host = await openPage(undefined, async (page) => {
      await page.route('**/highlight.js', async (route) => {
        await held;
        await route.continue();
      });
    });
    await host.reset(stateOf(withContext(hostEvents('streamed-thinking'))));
    const page = host.page;
    assert.match(await page.locator('.code-block pre > code').first().innerText(), /def /);
    assert.deepEqual(await colouredCode(page), [], 'no colours before it ran');
    release();
    await page.waitForFunction(() => CSS.highlights.get('code-keyword')?.size);
    assert.deepEqual((await colouredCode(page))[0], ['code-keyword', 'def']);
    assert.deepEqual(host.errors, []);
  });

  it("highlights code off the page's thread: a highlighter that never answers again leaves the page typing", async () => {
    // dist/highlight.js swapped for a worker that answers its first request (the first
    // keyword) and then never returns: a grammar whose compiling never ends. Run in the
    // page, it would hold the page's thread from the first message the page got.
    const spinning =
      "addEventListener('message', (e) => { postMessage({ id: e.data.id, runs: [{ start: 0, end: 3, kind: 'keyword' }] }); for (;;); });";
    const host = await openPage(undefined, async (page) => {
      await page.route('**/highlight.js', (route) => route.fulfill({ contentType: 'text/javascript', body: spinning }));
    });
    await host.reset(stateOf(withContext(hostEvents('streamed-thinking'))));
    const page = host.page;
    // The worker had the block and spins now.
    await page.waitForFunction(() => CSS.highlights.get('code-keyword')?.size);
    assert.deepEqual((await colouredCode(page))[0], ['code-keyword', 'def']);
    const prompt = page.locator('textarea.prompt');
    await prompt.fill('still typing');
    assert.equal(await prompt.inputValue(), 'still typing');
    await host.frame();
    assert.deepEqual(host.errors, []);
  });

  it('animates what runs (spinner, thinking, a running tool) at no more than 10 frames a second', async () => {
    const host = await openWith(
      stateOf([
        BOUND,
        {
          kind: 'notification',
          method: 'claude/status',
          params: { channelId: 'ch-1', seq: 1, state: 'running', sessionId: 's-1' },
        },
        entryEvent({ kind: 'thinking', id: 'm:0', text: 'Weighing it', streaming: true }),
        entryEvent({ kind: 'tool', id: 't1', name: 'Bash', status: 'running', input: { command: 'make' } }),
        entryEvent({ kind: 'text', id: 'm:2', text: 'Working on it', streaming: true }),
      ]),
    );
    // Each endless animation's changes a second: steps(n) between each two keyframes makes n;
    // any other timing function changes the frame at every frame the compositor draws.
    const animations = await host.page.evaluate(() =>
      document.getAnimations().map((animation) => {
        const effect = animation.effect as KeyframeEffect;
        const { duration, iterations } = effect.getComputedTiming();
        const segments = effect.getKeyframes().slice(0, -1);
        const steps = segments.map((k) => Number(/^steps\((\d+)/.exec(k.easing)?.[1] ?? Infinity));
        return {
          name: (animation as CSSAnimation).animationName,
          endless: iterations === Infinity,
          perSecond: steps.reduce((a, b) => a + b, 0) / (Number(duration) / 1000),
        };
      }),
    );
    const names = animations.map((a) => a.name).sort();
    assert.deepEqual(names, ['blink', 'pulse', 'pulse', 'spin'], 'the cursor, thinking, the tool and the spinner move');
    for (const animation of animations) {
      assert.ok(animation.endless, `${animation.name} repeats while the turn runs`);
      assert.ok(animation.perSecond <= 10, `${animation.name} changes ${animation.perSecond} times a second`);
    }
    assert.deepEqual(host.errors, []);
  });
});

describe('permissions', () => {
  it('shows a Write request with its diff; Allow answers it', async () => {
    const events = hostEvents('write-allowed');
    const asked = untilAsked(events);
    const host = await openWith(stateOf(events.slice(0, asked)));
    const card = host.page.locator('.permission-card');
    assert.equal(await card.count(), 1);
    const text = await card.innerText();
    assert.match(text, /Allow Write/);
    assert.match(text, /README\.md/);
    assert.equal(await card.locator('.diff-line.del .code').first().innerText(), 'A web shop.');
    assert.equal(await card.locator('.diff-line.add .code').first().innerText(), 'A tiny web shop.');
    assert.match(text, /Allow all edits for this session/);
    assert.equal(await card.getByRole('button', { name: 'Review in diff editor' }).count(), 1);
    assert.match(await host.page.locator('.status-line').innerText(), /Waiting for your answer/);
    await host.screenshot('permission-write');

    await card.getByRole('button', { name: 'Allow', exact: true }).click();
    const request = await host.request('respondPermission');
    const pending = Object.keys(stateOf(events.slice(0, asked)).pending);
    assert.deepEqual(request.params, { requestId: pending[0], decision: 'allow' });

    await host.answer('respondPermission', null);
    await host.events(events.slice(asked));
    assert.equal(await card.count(), 0, 'the card goes when the request is answered');
    const write = host.page.locator('.entry.tool', { hasText: 'Write' });
    assert.equal(await write.locator('.tool-files .diff').count(), 1, 'the file update shows its diff');
    assert.match(await write.locator('.tool-files .file-head').innerText(), /README\.md\s*\+5\s*−1\s*Open diff/);
    assert.doesNotMatch(await write.locator('.tool-head').innerText(), /\+5/, 'the counts show once, on the file row');
    await write.getByRole('button', { name: 'Open diff' }).click();
    const open = await host.request('openFileDiff');
    assert.equal(typeof open.params.seq, 'number');
    await host.screenshot('write-done');
  });

  it('shared daemon: shows reconnecting, then the chat as an attach answered it, its card gone', async () => {
    const events = hostEvents('write-allowed');
    const asked = untilAsked(events);
    const host = await openWith(stateOf(events.slice(0, asked)));
    assert.equal(await host.page.locator('.permission-card').count(), 1);
    await host.events([{ kind: 'connection', reconnecting: true }]);
    assert.match(await host.page.locator('.status-line').innerText(), /Reconnecting to the shared daemon/);
    await host.screenshot('reconnecting');

    // The daemon no longer had what the page missed: the attach answer's entries replace it.
    await host.events([
      { kind: 'snapshot', channelId: 'ch-1', seq: 99, entries: goldenEntries('write-allowed') as never, pending: [] },
      { kind: 'connection', reconnecting: false },
    ]);
    assert.equal(await host.page.locator('.permission-card').count(), 0, 'the answered request has no card');
    assert.doesNotMatch(await host.page.locator('.status-line').innerText(), /Reconnecting/);
    const texts = await host.page.locator('.entry.text').allInnerTexts();
    assert.deepEqual(
      texts.map((t) => t.trim()),
      ["I'll update the README.", 'README.md is updated.'],
      'each entry drawn once',
    );
  });

  it('denies an Edit with the reason typed', async () => {
    const events = hostEvents('edit-denied');
    const asked = untilAsked(events);
    const host = await openWith(stateOf(events.slice(0, asked)));
    const card = host.page.locator('.permission-card');
    await card.getByRole('textbox', { name: 'Reason for denying' }).fill('Keep the greeting short.');
    await card.getByRole('button', { name: 'Deny' }).click();
    const request = await host.request('respondPermission');
    assert.equal(request.params.decision, 'deny');
    assert.equal(request.params.message, 'Keep the greeting short.');
    await host.answer('respondPermission', null);
    await host.events(events.slice(asked));
    const edit = host.page.locator('.entry.tool', { hasText: 'Edit' });
    assert.equal(await edit.getAttribute('data-status'), 'denied');
    await edit.locator('.tool-head').click();
    assert.match(await edit.locator('.tool-body').innerText(), /Keep the greeting short\./);
    await host.screenshot('edit-denied');
  });

  it('answers an AskUserQuestion with the options chosen (multiSelect joined)', async () => {
    const events = hostEvents('ask-question');
    const asked = untilAsked(events);
    const host = await openWith(stateOf(events.slice(0, asked)));
    const card = host.page.locator('.permission-card');
    assert.equal(await card.locator('.question').count(), 2);
    await card.getByRole('radio', { name: /Blue/ }).click();
    await card.getByRole('checkbox', { name: /hover/ }).click();
    await card.getByRole('checkbox', { name: /focus/ }).click();
    await host.screenshot('question');
    await card.getByRole('button', { name: 'Submit answers' }).click();
    const request = await host.request('respondPermission');
    assert.equal(request.params.decision, 'allow');
    assert.deepEqual(request.params.answers, {
      'Which colour should the button be?': 'Blue',
      'Which states need styles?': 'hover, focus',
    });
  });

  it('approves a plan and switches to accepting edits', async () => {
    const events = hostEvents('plan-approved');
    const asked = untilAsked(events);
    const host = await openWith(stateOf(events.slice(0, asked)));
    const card = host.page.locator('.permission-card');
    assert.equal(await card.locator('.markdown.plan h1').innerText(), 'Greeting plan');
    await host.screenshot('plan');
    await card.getByRole('button', { name: 'Approve, auto-accept edits' }).click();
    const request = await host.request('respondPermission');
    assert.deepEqual({ ...request.params, requestId: '' }, { requestId: '', decision: 'allow', mode: 'acceptEdits' });
  });
});

describe('tools and turns', () => {
  it('shows a Bash call with its output, a sub-agent nested, and an API error in red', async () => {
    const state = stateOf([
      ...hostEvents('bash-output'),
      ...hostEvents('sub-agent').slice(1),
      ...hostEvents('api-error').slice(1),
    ]);
    const host = await openWith(state);
    const page = host.page;
    const bash = page.locator('.entry.tool', { hasText: 'seq 1 12' });
    await bash.locator('.tool-head').click();
    assert.match(await bash.locator('.tool-result').innerText(), /^1\n2\n3/);
    assert.equal(
      await page.locator('.sub-agent .entry.tool', { hasText: 'echo hi' }).count(),
      1,
      "the sub-agent's Bash is under its Agent call",
    );
    const failed = page.locator('.entry.notice.error.apiError');
    assert.match(await failed.innerText(), /API Error: 500 scripted failure/);
    assert.equal(
      await page.locator('.entry.turn.error .turn-error').count(),
      0,
      'the footer does not repeat the error its notice shows',
    );
    // The theme's error red, mixed toward the foreground so it reads as text (color(srgb r g b)).
    const color = await failed.locator('.notice-text').evaluate((el) => getComputedStyle(el).color);
    const [r = 0, g = 0, b = 0] = (color.match(/[\d.]+/g) ?? []).map(Number);
    assert.ok(r > 0.8 && r - g > 0.3 && r - b > 0.3, `the error is red: ${color}`);
    await host.screenshot('tools-and-error');
  });

  it('caps a huge diff and keeps long paths on one line', async () => {
    const path = `/home/dev/project/${'very-long-directory-name/'.repeat(6)}generated_module.py`;
    const diff = `--- /dev/null\n+++ ${path}\n@@ -0,0 +1,400 @@\n${Array.from({ length: 400 }, (_, i) => `+line ${i} ${'x'.repeat(i % 7 === 0 ? 180 : 20)}`).join('\n')}\n`;
    const events: ChatEvent[] = [
      ...hostEvents('write-allowed').slice(0, 5),
      {
        kind: 'notification',
        method: 'claude/fileUpdated',
        params: {
          channelId: 'ch-1',
          seq: 100,
          path,
          toolName: 'Write',
          toolUseId: 'toolu_big',
          messageId: null,
          oldContent: null,
          newContent: null,
          diff,
          notice: null,
          parentToolUseId: null,
        },
      },
      {
        kind: 'notification',
        method: 'claude/entry',
        params: {
          channelId: 'ch-1',
          seq: 101,
          entry: {
            kind: 'tool',
            id: 'toolu_big',
            name: 'Write',
            status: 'done',
            input: { file_path: path, content: '...' },
            files: [{ path, added: 400, removed: 0 }],
          },
        },
      },
    ];
    const host = await openWith(stateOf(events));
    const tool = host.page.locator('.entry.tool', { hasText: 'generated_module.py' });
    assert.equal(await tool.locator('.diff-line').count(), 12);
    const showAll = tool.getByRole('button', { name: /Show all 400 lines/ });
    assert.equal(await showAll.count(), 1);
    const overflow = await host.page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.equal(overflow, 0, 'nothing is wider than the page');
    await host.screenshot('big-diff');
    await showAll.click();
    assert.equal(await tool.locator('.diff-line').count(), 400);
  });
});

/** A claude/entry event of channel ch-1. */
function entryEvent(entry: ConversationEntry, seq = 0): ChatEvent {
  return { kind: 'notification', method: 'claude/entry', params: { channelId: 'ch-1', seq, entry } };
}

const BOUND: ChatEvent = { kind: 'bound', channelId: 'ch-1', sessionId: 's-1', cwd: '/home/dev/project' };

describe('entries as they say', () => {
  it('marks an interrupted answer and shows the interrupted notice and footer', async () => {
    const host = await openWith(stateOf(hostEvents('interrupted')));
    const answer = host.page.locator('.entry.text');
    assert.match(await answer.locator('.note').innerText(), /^Interrupted$/);
    assert.equal(await host.page.locator('.entry.notice.interrupted').innerText(), 'Interrupted by you');
    assert.match(await host.page.locator('.entry.turn').innerText(), /^Interrupted · /);
    await host.screenshot('interrupted');
  });

  it("nests a sub-agent's prompt and tools under its Agent call", async () => {
    const host = await openWith(stateOf(hostEvents('sub-agent')));
    const agent = host.page.locator('.entry.tool', { hasText: 'Agent' }).first();
    assert.match(await agent.locator('.sub-agent .entry.user').innerText(), /SUBTASK: say hi with echo/);
    assert.equal(await agent.locator('.sub-agent .entry.user .message-actions').count(), 0, 'no fork from inside');
    assert.equal(await agent.locator('.sub-agent .entry.tool', { hasText: 'echo hi' }).count(), 1);
  });

  it('shows notices by subtype and level, an unknown one by its text', async () => {
    const host = await openWith(
      stateOf([
        BOUND,
        entryEvent({ kind: 'notice', id: 'n1', subtype: 'compaction', level: 'info', text: 'Conversation compacted' }),
        entryEvent({ kind: 'notice', id: 'n2', subtype: 'commandOutput', level: 'info', text: 'Set model to haiku' }),
        entryEvent({ kind: 'notice', id: 'n3', subtype: 'cleared', level: 'info', text: '/clear' }),
        entryEvent({
          kind: 'notice',
          id: 'n4',
          subtype: 'rateLimitWarning',
          level: 'warn',
          text: 'Nearly at the limit',
        }),
        entryEvent({ kind: 'notice', id: 'n5', subtype: 'compactSummary', level: 'info', text: 'We wrote a readme.' }),
      ]),
    );
    const notices = host.page.locator('.entry.notice');
    assert.deepEqual(await notices.allInnerTexts(), [
      'Conversation compacted',
      'Set model to haiku',
      'Conversation cleared',
      'Nearly at the limit',
      'Summary of the earlier conversation',
    ]);
    assert.equal(await host.page.locator('.entry.notice.commandOutput pre').count(), 1);
    assert.equal(await host.page.locator('.entry.notice.warn').getAttribute('data-subtype'), 'rateLimitWarning');
    await host.screenshot('notices');
  });

  it('shows each tool status and permission decision the entry gives', async () => {
    const tool = (id: string, status: ToolEntry['status'], permission?: ToolEntry['permission']) =>
      entryEvent({ kind: 'tool', id, name: 'Bash', status, input: { command: `echo ${id}` }, permission });
    const host = await openWith(
      stateOf([
        BOUND,
        tool('asking', 'awaitingPermission', { decision: 'pending', requestId: 'r1' }),
        tool('failed', 'failed'),
        tool('interrupted', 'interrupted'),
        tool('denied', 'denied', { decision: 'denied' }),
        tool('allowed', 'done', { decision: 'allowed' }),
        tool('by-rule', 'done', { decision: 'allowed', byRule: true }),
      ]),
    );
    const row = (id: string) => host.page.locator('.entry.tool', { hasText: `echo ${id}` });
    for (const [id, label] of [
      ['asking', 'waiting for your permission'],
      ['failed', 'failed'],
      ['interrupted', 'interrupted'],
      ['denied', 'denied'],
    ]) {
      assert.equal(await row(id!).locator('.tool-status').getAttribute('aria-label'), label);
    }
    assert.equal(await row('denied').locator('.badge.denied').innerText(), 'denied');
    assert.equal(await row('allowed').locator('.badge').innerText(), 'allowed');
    assert.equal(await row('by-rule').locator('.badge').innerText(), 'auto-allowed');
    await host.screenshot('tool-statuses');
  });

  it('lists a queued prompt last until the CLI takes it up, then in the conversation', async () => {
    const queued = { kind: 'prompt', id: 'p2', text: 'and the changelog' } as const;
    const host = await openWith(
      stateOf([
        BOUND,
        entryEvent({ kind: 'prompt', id: 'p1', text: 'update the readme' }),
        entryEvent({ ...queued, queued: true }),
        entryEvent({ kind: 'text', id: 'm:0', text: 'Updating it.' }),
      ]),
    );
    const prompts = host.page.locator('.entry.user');
    assert.deepEqual(await prompts.locator('.user-text').allInnerTexts(), ['update the readme', 'and the changelog']);
    assert.match(await host.page.locator('.queued .entry.user').innerText(), /Queued: sent when Claude is ready/);
    await host.events([entryEvent(queued), entryEvent({ kind: 'text', id: 'm2:0', text: 'And the changelog.' })]);
    assert.equal(await host.page.locator('.queued .entry').count(), 0);
    assert.deepEqual(
      await host.page
        .locator('.entries .chunk > .entry')
        .evaluateAll((els) => els.map((e) => e.querySelector('.user-text, .markdown')?.textContent.trim())),
      ['update the readme', 'Updating it.', 'and the changelog', 'And the changelog.'],
    );
  });

  it('shows a notice about the running turn before its prompt, the answer still streaming after it', async () => {
    const host = await openWith(
      stateOf([
        BOUND,
        entryEvent({ kind: 'prompt', id: 'p1', text: 'first question' }),
        entryEvent({ kind: 'text', id: 'm:0', text: 'First answer.' }),
        entryEvent({
          kind: 'turn',
          id: 'turn:1',
          outcome: 'success',
          costUsd: 0.01,
          durationMs: 1200,
          permissionWaitMs: 0,
        }),
        entryEvent({ kind: 'prompt', id: 'p2', text: 'second question' }),
        entryEvent({ kind: 'text', id: 'm2:0', text: 'Streaming', streaming: true }),
      ]),
    );
    await host.events([
      { kind: 'notice', level: 'info', text: 'Attached: the chat goes on from here.', beforeTurn: true },
      {
        kind: 'notification',
        method: 'claude/delta',
        params: { channelId: 'ch-1', seq: 0, kind: 'text', index: 0, text: ' on.', entryId: 'm2:0' },
      },
    ]);
    assert.deepEqual(
      await host.page
        .locator('.entries .chunk > .entry:not(.turn)')
        .evaluateAll((els) =>
          els.map((e) => e.querySelector('.user-text, .markdown, .notice-text')?.textContent.trim()),
        ),
      ['first question', 'First answer.', 'Attached: the chat goes on from here.', 'second question', 'Streaming on.'],
    );
    await host.screenshot('attached-mid-turn');
  });

  it("names a worktree chat's files from its worktree, not under .claude/worktrees/<name>", async () => {
    const worktree = '/home/dev/project/.claude/worktrees/login-fix';
    const file = `${worktree}/src/auth/session.py`;
    const host = await openWith(
      stateOf([
        { ...BOUND, folder: worktree },
        entryEvent({
          kind: 'tool',
          id: 'toolu_w',
          name: 'Write',
          status: 'done',
          input: { file_path: file, content: 'x = 1\n' },
          files: [{ path: file, added: 1, removed: 0 }],
        }),
      ]),
    );
    const write = host.page.locator('.entry.tool', { hasText: 'Write' });
    assert.match(await write.locator('.tool-head').innerText(), /Write\s+src\/auth\/session\.py/);
    assert.match(await write.locator('.tool-files').innerText(), /^src\/auth\/session\.py/);
    assert.equal(await write.locator('.tool-files .file-path').getAttribute('title'), file, 'the whole path on hover');
  });

  it('shows a reloaded chat from its stored entries: decisions, results, +N -M without a diff', async () => {
    const host = await openWith(
      stateOf([
        BOUND,
        {
          kind: 'transcript',
          entries: [
            { kind: 'prompt', id: 'p1', text: 'update the readme' },
            {
              kind: 'tool',
              id: 'toolu_1',
              name: 'Write',
              status: 'done',
              input: { file_path: '/home/dev/project/README.md', content: '# Shop\n' },
              permission: { decision: 'allowed' },
              result: { text: 'File written' },
              files: [{ path: '/home/dev/project/README.md', added: 3, removed: 1 }],
            },
            { kind: 'text', id: 'm:0', text: 'Cut short', aborted: true },
          ],
        },
      ]),
    );
    const write = host.page.locator('.entry.tool', { hasText: 'Write' });
    assert.match(await write.locator('.tool-files').innerText(), /README\.md\s*\+3\s*−1/);
    assert.doesNotMatch(await write.locator('.tool-head').innerText(), /\+3/, 'the counts show once, on the file row');
    assert.equal(await write.locator('.tool-files .diff').count(), 0, 'no diff is known');
    await host.screenshot('resumed-write');
    await write.locator('.tool-head').click();
    assert.match(await write.locator('.tool-body').innerText(), /Result\nFile written/i);
    assert.equal(await write.locator('.badge').innerText(), 'allowed');
    assert.match(await host.page.locator('.entry.text .note').innerText(), /Interrupted/);
  });
});

describe('code blocks', () => {
  /** An answer of `count` Python blocks, each with a function named step_<i>. */
  const steps = (count: number) =>
    Array.from(
      { length: count },
      (_, i) => `Step ${i}:\n\n\`\`\`python\ndef step_${i}(x):\n    return x + ${i}\n\`\`\`\n\n`,
    ).join('');
  /** The functions whose names the page colours now. */
  const colouredSteps = async (host: ScriptedHost) =>
    (await colouredCode(host.page)).filter(([name]) => name === 'code-function').map(([, text]) => text);

  it('colours only the blocks near the view: the first again once scrolled back to, the last no more', async () => {
    const count = 60;
    const host = await openWith(
      stateOf([
        BOUND,
        entryEvent({ kind: 'prompt', id: 'u1', text: 'Write the steps' }),
        entryEvent({ kind: 'text', id: 'm1:0', text: steps(count) }),
      ]),
    );
    const page = host.page;
    // The view follows the end: the last block is coloured, the first is far above.
    await page.waitForFunction(() => CSS.highlights.get('code-function')?.size);
    await host.frame();
    let shown = await colouredSteps(host);
    assert.ok(shown.includes(`step_${count - 1}`), `the last block is coloured: ${shown.join(' ')}`);
    assert.ok(!shown.includes('step_0') && shown.length < count / 3, `only blocks near the end: ${shown.join(' ')}`);
    assert.equal(await page.locator('.code-block code span').count(), 0, 'no element per token');

    await page.locator('.transcript').evaluate((el) => (el.scrollTop = 0));
    await page.waitForFunction(() => {
      const first = document.querySelector('.code-block code');
      return [...(CSS.highlights.get('code-function') ?? [])].some((r) => first?.contains(r.startContainer));
    });
    await host.frame();
    shown = await colouredSteps(host);
    assert.ok(shown.includes('step_0'), `the first block is coloured once in view: ${shown.join(' ')}`);
    assert.ok(!shown.includes(`step_${count - 1}`), `the last one let its colours go: ${shown.join(' ')}`);
    await host.screenshot('code-colours-top');
    assert.deepEqual(host.errors, []);
  });
});

describe('prompt', () => {
  it('grows with its lines up to 240 px, then scrolls', async () => {
    const host = await openWith(stateOf(hostEvents('streamed-thinking')));
    const prompt = host.page.getByRole('textbox', { name: 'Message to Claude' });
    const height = () => prompt.evaluate((el) => el.getBoundingClientRect().height);
    await prompt.fill('one line');
    await host.frame();
    const one = await height();
    await prompt.fill('one\ntwo\nthree');
    await host.frame();
    const three = await height();
    assert.ok(three > one + 20, `three lines (${three} px) are taller than one (${one} px)`);
    await prompt.fill(Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n'));
    await host.frame();
    assert.equal(await height(), 240);
    await prompt.fill('');
    await host.frame();
    assert.equal(await height(), one, 'back to one line when emptied');
  });

  it('sends on Enter, completes @ files from the host and / commands from the channel info', async () => {
    const host = await openWith(stateOf(hostEvents('streamed-thinking')));
    const prompt = host.page.getByRole('textbox', { name: 'Message to Claude' });
    await prompt.fill('');
    await prompt.pressSequentially('look at @rea');
    // Typed slowly (a loaded machine), the page asks for each pause's token ('', 'r', ...)
    // and drops those answers as stale: the one that counts is the last.
    await host.answer(
      'completeFiles',
      { paths: ['README.md', 'src/reader.ts', 'docs/reading-list.md'] },
      (r) => r.params.query === 'rea',
    );
    await host.frame();
    assert.equal(await host.page.locator('.completion-item').count(), 3);
    await host.screenshot('file-completion');
    await prompt.press('ArrowDown');
    await prompt.press('Enter');
    assert.equal(await prompt.inputValue(), 'look at @src/reader.ts ');

    await prompt.fill('');
    await prompt.pressSequentially('/co');
    const items = host.page.locator('.completion-item');
    assert.deepEqual(await items.locator('.completion-label').allInnerTexts(), ['/compact', '/context']);
    await host.screenshot('command-completion');
    await prompt.press('Tab');
    assert.equal(await prompt.inputValue(), '/compact ');

    await prompt.fill('hello there');
    await prompt.press('Shift+Enter');
    await prompt.pressSequentially('second line');
    await prompt.press('Enter');
    const send = await host.request('send');
    assert.deepEqual(send.params, { text: 'hello there\nsecond line' });
    assert.equal(await prompt.inputValue(), '');
  });

  it('offers bypassPermissions only when the user opted in, and switches the mode when picked', async () => {
    const modesOf = async (host: ScriptedHost) =>
      host.page
        .getByRole('combobox', { name: 'Permission mode' })
        .locator('option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    const plain = await openWith(stateOf(hostEvents('streamed-thinking')));
    assert.ok(!(await modesOf(plain)).includes('bypassPermissions'));
    const optedIn = await openPage();
    await optedIn.reset(stateOf(hostEvents('streamed-thinking')), undefined, true);
    await optedIn.frame();
    assert.ok((await modesOf(optedIn)).includes('bypassPermissions'));
    await optedIn.page.getByRole('combobox', { name: 'Permission mode' }).selectOption('bypassPermissions');
    const request = await optedIn.request('setPermissionMode');
    assert.deepEqual(request.params, { mode: 'bypassPermissions' });
  });

  it("shows the CLI's default model in a new chat, the session's in a resumed one until Claude names it", async () => {
    const unnamed = { ...INFO, model: null };
    const picked = (host: ScriptedHost, label: string) =>
      host.page
        .locator(`select[aria-label="${label}"]`)
        .evaluate((s: HTMLSelectElement) => (s.hidden ? '(hidden)' : (s.selectedOptions[0]?.textContent ?? '')));
    const fresh = await openPage();
    await fresh.reset(stateOf([BOUND]), unnamed);
    assert.equal(await picked(fresh, 'Model'), 'Default (recommended)');
    assert.equal(await picked(fresh, 'Effort'), 'Default effort');
    const resumed = await openPage();
    const conversation: ChatEvent = {
      kind: 'transcript',
      entries: [
        { kind: 'prompt', id: 'p1', text: 'hi' },
        { kind: 'text', id: 'm:0', text: 'Hello.' },
      ],
    };
    await resumed.reset(stateOf([BOUND, conversation]), unnamed);
    assert.equal(await picked(resumed, 'Model'), "The session's model");
    await resumed.events([
      {
        kind: 'notification',
        method: 'claude/status',
        params: { channelId: 'ch-1', seq: 1, state: 'running', sessionId: 's-1', model: 'claude-haiku-5-5' },
      },
    ]);
    assert.equal(await picked(resumed, 'Model'), 'Haiku');
  });

  it('shows a resumed chat with the cost, context meter, model and effort the live one had', async () => {
    const resumed: ChatEvent = { ...BOUND, costUsd: 0.1617, context: { ...CONTEXT, percentage: 13.34 } };
    const conversation: ChatEvent = {
      kind: 'transcript',
      entries: [
        { kind: 'prompt', id: 'p1', text: 'update the readme' },
        { kind: 'text', id: 'm:0', text: 'I updated the README.' },
        { kind: 'turn', id: 'turn:p1', outcome: 'success', durationMs: 4200, permissionWaitMs: 0, costUsd: 0.1617 },
      ],
    };
    const host = await openPage();
    await host.reset(stateOf([resumed, conversation]), { ...INFO, model: 'default', effort: 'high' });
    const header = await host.page.locator('.header').innerText();
    assert.match(header, /13% context/);
    assert.match(header, /\$0\.16/);
    assert.equal(await host.page.locator('.meter').getAttribute('aria-valuenow'), '13');
    const picked = (label: string) =>
      host.page.locator(`select[aria-label="${label}"]`).evaluate((s: HTMLSelectElement) => s.value);
    assert.deepEqual([await picked('Model'), await picked('Effort')], ['default', 'high']);
    await host.screenshot('resumed-totals');
    assert.deepEqual(host.errors, []);
  });

  it('keeps the model and effort of the channel in the page state, for the host to resume the chat with', async () => {
    const host = await openWith(stateOf(hostEvents('streamed-thinking')));
    const saved = () =>
      host.page.evaluate(
        () => JSON.parse(sessionStorage.getItem('vscode-state') ?? '{}') as { model?: string; effort?: string },
      );
    assert.equal((await saved()).model, 'default');
    await host.page.locator('select[aria-label="Effort"]').selectOption('high');
    const request = await host.answer('setModel', null);
    assert.deepEqual(request.params, { model: 'default', effort: 'high' });
    // The host takes the channel's info anew after claude/setModel and sends it.
    await host.send({ type: 'info', info: { ...INFO, model: 'haiku', effort: 'high' } });
    await host.frame();
    const kept = await saved();
    assert.deepEqual([kept.model, kept.effort], ['haiku', 'high']);
  });

  it('keeps the permission mode the chat runs in (not the setting) in the page state, for the host', async () => {
    const host = await openWith(stateOf(hostEvents('streamed-thinking')));
    const saved = () =>
      host.page.evaluate(
        () =>
          (JSON.parse(sessionStorage.getItem('vscode-state') ?? '{}') as { permissionMode?: string }).permissionMode,
      );
    assert.equal(await saved(), 'default');
    await host.page.locator('select[aria-label="Permission mode"]').selectOption('plan');
    const request = await host.answer('setPermissionMode', null);
    assert.deepEqual(request.params, { mode: 'plan' });
    // The daemon reports the change with claude/status before it answers (docs/protocol.md).
    await host.events([
      {
        kind: 'notification',
        method: 'claude/status',
        params: { channelId: 'ch-1', seq: 99, state: 'idle', sessionId: 's-1', permissionMode: 'plan' },
      },
    ]);
    assert.equal(await saved(), 'plan');
  });

  it('refuses an image over 5 MB with a message; Escape stops a running turn', async () => {
    const events = hostEvents('interrupted');
    const host = await openWith(stateOf(events.slice(0, 20)));
    await host.page.evaluate(() => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array(6 * 1024 * 1024)], 'huge.png', { type: 'image/png' }));
      document
        .querySelector('.composer')!
        .dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    });
    await host.frame();
    assert.match(
      await host.page.locator('.composer-message').innerText(),
      /huge\.png is 6\.0 MB: images can be 5 MB at most/,
    );
    assert.equal(await host.page.locator('.thumb').count(), 0);
    await host.page.getByRole('textbox', { name: 'Message to Claude' }).press('Escape');
    await host.request('interrupt');
    await host.screenshot('running-refused-image');
  });
});

describe('user message actions', () => {
  it('rewinds files after a dry run shown in a dialog; forks from a message', async () => {
    const host = await openWith(stateOf(hostEvents('write-allowed')));
    const page = host.page;
    const message = page.locator('.entry.user').first();
    await message.hover();
    await message.getByRole('button', { name: 'Rewind files to before this message' }).click();
    const dry = await host.answer('rewind', {
      canRewind: true,
      filesChanged: ['/home/dev/project/README.md'],
      insertions: 1,
      deletions: 5,
      diffs: [
        {
          path: '/home/dev/project/README.md',
          note: null,
          diff: '--- /home/dev/project/README.md\n+++ /home/dev/project/README.md\n@@ -1,7 +1,3 @@\n # Project\n \n-A tiny web shop.\n-\n-## Usage\n-\n-Run `make serve`.\n+A web shop.\n',
        },
      ],
    });
    assert.equal(dry.params.dryRun, true);
    await host.frame();
    const dialog = page.getByRole('dialog');
    assert.match(await dialog.innerText(), /1 file change \(\+1 −5\)/);
    await host.screenshot('rewind-dialog');
    await dialog.getByRole('button', { name: 'Rewind files' }).click();
    const real = await host.answer('rewind', {
      canRewind: true,
      filesChanged: ['/home/dev/project/README.md'],
      insertions: 1,
      deletions: 5,
      diffs: [],
    });
    assert.deepEqual(real.params, { messageId: dry.params.messageId, dryRun: false });
    await host.frame();
    assert.equal(await dialog.count(), 0);

    await message.hover();
    await message.getByRole('button', { name: 'Fork the conversation from here' }).click();
    const fork = await host.request('fork');
    assert.equal(fork.params.messageId, dry.params.messageId);
  });
});

describe('page state', () => {
  it("keeps an edit's diff over a reload, where the resumed chat's entries have only +N -M", async () => {
    const events = hostEvents('write-allowed');
    const live = stateOf(events);
    const host = await openWith(initialState());
    await host.events(events);
    const page = host.page;
    const write = page.locator('.entry.tool', { hasText: 'Write' });
    assert.equal(await write.locator('.tool-files .diff').count(), 1, 'the live edit shows its diff');
    const shown = await write.locator('.tool-files .diff').innerText();

    // What a reload gives the page: the chat resumed from its session, whose stored entries
    // carry the file and its counts but no diff, and no file update.
    await page.reload();
    await host.waitForPosted((m) => m.type === 'ready');
    const resumed = stateOf([]);
    Object.assign(resumed, { sessionId: live.sessionId, cwd: live.cwd, channelId: 'ch-resumed' });
    reduce(resumed, {
      kind: 'transcript',
      entries: live.entries.map((e): ConversationEntry => {
        if (e.kind !== 'tool') return e as ConversationEntry;
        const files = live.files
          .filter((f) => f.toolUseId === e.id && f.diff !== null)
          .map((f) => ({ path: f.path, ...diffCounts(f.diff ?? '') }));
        return { ...e, ...(files.length ? { files } : {}) };
      }),
    });
    assert.deepEqual(resumed.files, []);
    await host.reset(resumed);
    assert.equal(await write.locator('.tool-files .diff').count(), 1, 'the diff the page had is shown again');
    assert.equal(await write.locator('.tool-files .diff').innerText(), shown);
    assert.match(await write.locator('.tool-files .file-head').innerText(), /README\.md\s*\+5\s*−1/);
    assert.equal(await write.getByRole('button', { name: 'Open diff' }).count(), 0, 'no before/after to open');
    await host.screenshot('reloaded-write-diff');
    await write.getByRole('button', { name: 'Open file' }).click();
    const open = await host.request('openFile');
    assert.deepEqual(open.params, { path: live.files.find((f) => f.diff !== null)?.path });
    assert.deepEqual(host.errors, []);
  });

  it('keeps the draft and the opened blocks when the page is recreated', async () => {
    const state = stateOf(hostEvents('bash-output'));
    const host = await openWith(state);
    const page = host.page;
    await page.getByRole('textbox', { name: 'Message to Claude' }).fill('a thought I have not sent');
    await page.locator('.entry.tool .tool-head').click();
    await page.waitForTimeout(400); // setState is debounced
    await page.reload();
    await host.waitForPosted((m) => m.type === 'ready');
    await host.reset(state);
    assert.equal(
      await page.getByRole('textbox', { name: 'Message to Claude' }).inputValue(),
      'a thought I have not sent',
    );
    assert.equal(await page.locator('.entry.tool.expanded').count(), 1);
    const saved = await page.evaluate(
      () => JSON.parse(sessionStorage.getItem('vscode-state') ?? '{}') as { cwd?: string; sessionId?: string },
    );
    assert.equal(saved.cwd, '/home/dev/project', 'the host can restore the chat from the page state');
    assert.equal(typeof saved.sessionId, 'string');
    await host.screenshot('restored');
  });
});

describe('header', () => {
  it('says a chat in a worktree runs there: its branch beside the title, the path in the tooltip', async () => {
    const worktree = {
      name: 'login-form',
      path: '/home/dev/project/.claude/worktrees/login-form',
      branch: 'worktree-login-form',
      baseRef: 'head',
      baseCommit: '3f6c1a9e2b7d4c8f0a1e5b6d7c8f9a0b1c2d3e4f',
      baseBranch: 'main',
      root: '/home/dev/project',
    };
    const host = await openPage();
    await host.reset(initialState(), { ...INFO, worktree });
    const branch = host.page.locator('.header-branch');
    assert.equal(await branch.innerText(), '⎇ worktree-login-form');
    assert.match(
      (await branch.getAttribute('title')) ?? '',
      /\.claude\/worktrees\/login-form, on branch worktree-login-form \(from main\)/,
    );
    await host.screenshot('worktree-header');

    await host.reset(initialState(), { ...INFO, worktree: null });
    assert.equal(await branch.innerText(), '', 'a chat in the folder itself names no branch');
  });

  it('keeps the title, the branch, the context meter and the buttons apart in a narrow column', async () => {
    const worktree = {
      name: 'login-form',
      path: '/home/dev/project/.claude/worktrees/login-form',
      branch: 'worktree-login-form-and-the-session-timeout',
      baseRef: 'head',
      baseCommit: '3f6c1a9e2b7d4c8f0a1e5b6d7c8f9a0b1c2d3e4f',
      baseBranch: 'main',
      root: '/home/dev/project',
    };
    const state = initialState();
    state.totals.costUsd = 1.23;
    state.totals.context = { maxTokens: 200_000, percentage: 42, totalTokens: 84_000 };
    const boxes = async (host: ScriptedHost) => {
      const parts = ['.header-title > span:first-child', '.header-branch', '.header-facts', '.header-actions'];
      return Promise.all(parts.map(async (part) => [part, await host.page.locator(part).boundingBox()] as const));
    };
    for (const width of [240, 320, 420]) {
      const host = await openPage({ width, height: 500 });
      await host.reset(state, { ...INFO, worktree });
      const placed = await boxes(host);
      for (const [i, [a, boxA]] of placed.entries()) {
        assert.ok(boxA && boxA.x >= 0 && boxA.x + boxA.width <= width + 0.5, `${a} within the ${width} px page`);
        for (const [b, boxB] of placed.slice(i + 1)) {
          const apart =
            boxA.x + boxA.width <= boxB!.x + 0.5 ||
            boxB!.x + boxB!.width <= boxA.x + 0.5 ||
            boxA.y + boxA.height <= boxB!.y + 0.5 ||
            boxB!.y + boxB!.height <= boxA.y + 0.5;
          assert.ok(apart, `${a} and ${b} overlap at ${width} px: ${JSON.stringify([boxA, boxB])}`);
        }
      }
      if (width === 240) await host.screenshot('narrow-header');
    }
  });
});
