import type { CDPSession } from 'playwright-core';

/** Writes a heap snapshot of the renderer `cdp` is attached to, to `file`. */
export function writeHeapSnapshot(cdp: CDPSession, file: string): Promise<void>;
