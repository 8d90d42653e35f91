// One heap snapshot over the Chrome DevTools Protocol, shared by the page benches.
import fs from 'node:fs';

/**
 * Writes a heap snapshot of the renderer `cdp` is attached to (the page's, or with the
 * workbench's thread, both) to `file`, for DevTools' Memory tab.
 * @param {{ on: Function, off: Function, send: Function }} cdp a Playwright CDP session
 * @param {string} file
 */
export async function writeHeapSnapshot(cdp, file) {
  const out = fs.openSync(file, 'w');
  const write = ({ chunk }) => fs.writeSync(out, chunk);
  cdp.on('HeapProfiler.addHeapSnapshotChunk', write);
  try {
    await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  } finally {
    cdp.off('HeapProfiler.addHeapSnapshotChunk', write);
    fs.closeSync(out);
  }
}
