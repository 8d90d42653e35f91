// The page bench's stand-in for the pipe between the daemon and the extension host: runs the
// daemon (the command after the log file), passes its stdin and stdout through unchanged,
// and appends to the log file the wall-clock time (ms, performance.timeOrigin + now) at which
// each `claude/turnEnded` (or TIMESTAMP_RELAY_MARK) came out of the daemon. It does nothing else, so that time is the
// daemon's send, before anything of the client's has run.
//
//   node timestamp-relay.mjs LOG_FILE COMMAND [ARG ...]

import { spawn } from 'node:child_process';
import fs from 'node:fs';

const [log, command, ...args] = process.argv.slice(2);
if (!log || !command) {
  console.error('usage: timestamp-relay.mjs LOG_FILE COMMAND [ARG ...]');
  process.exit(2);
}
// The envelope as the daemon writes it (claude_sidecar/frontends/server/outbox.py): only the
// notification, not a mention of the method elsewhere (initialize lists them).
// TIMESTAMP_RELAY_MARK notes another message instead (the page bench's --long: `"pid":`,
// which of what it sees only claude/newChannel's answer holds).
const MARK = process.env.TIMESTAMP_RELAY_MARK || '"method":"claude/turnEnded"';
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
let tail = '';
child.stdout.on('data', (chunk) => {
  const at = performance.timeOrigin + performance.now();
  process.stdout.write(chunk);
  // A mark split across two reads is found in the next one (the tail is shorter than it).
  const text = tail + chunk.toString('latin1');
  for (let i = text.indexOf(MARK); i >= 0; i = text.indexOf(MARK, i + 1)) fs.appendFileSync(log, `${at}\n`);
  tail = text.slice(-(MARK.length - 1));
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
