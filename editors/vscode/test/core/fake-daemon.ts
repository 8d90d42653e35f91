// A stand-in daemon for the handshake tests: answers `initialize` with what the test gives
// (a result or an error), every other request with null, and writes each message it got to
// a file, one JSON line each. Plain Node, run with `node -e`: no daemon, no CLI.

import fs from 'node:fs';

const SCRIPT = String.raw`
const fs = require('node:fs');
const answer = JSON.parse(process.argv[1]);
const record = process.argv[2];
let buffer = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())[1]);
    if (buffer.length < end + 4 + length) return;
    const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());
    buffer = buffer.subarray(end + 4 + length);
    fs.appendFileSync(record, JSON.stringify(message) + '\n');
    if (message.method === 'exit') process.exit(0);
    if (message.id === undefined) continue;
    const reply = message.method === 'initialize' ? answer : { result: null };
    const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, ...reply });
    process.stdout.write('Content-Length: ' + Buffer.byteLength(body) + '\r\n\r\n' + body);
  }
});
process.stdin.on('end', () => process.exit(0));
`;

export interface FakeDaemon {
  /** The command that runs it. */
  command: string[];
  /** The messages it got so far, in order. */
  received(): { method?: string; params?: unknown }[];
}

/** A fake daemon answering `initialize` with `answer` (`{ result }` or `{ error }`); it records into `file`. */
export function fakeDaemon(answer: { result: unknown } | { error: unknown }, file: string): FakeDaemon {
  return {
    command: [process.execPath, '-e', SCRIPT, JSON.stringify(answer), file],
    received: () =>
      fs.existsSync(file)
        ? fs
            .readFileSync(file, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as { method?: string; params?: unknown })
        : [],
  };
}
