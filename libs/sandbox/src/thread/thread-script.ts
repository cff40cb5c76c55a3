import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SandboxStartError } from '../errors';

const ENTRY = 'cell-thread.js';

/**
 * The cell thread's entry script. worker_threads need JavaScript: from the built code it is this
 * file's sibling; from TypeScript sources (tests via ts-jest) it is the copy `npm run build` put
 * under `dist/` at the repository root.
 */
export function threadScriptPath(): string {
  const path = __filename.endsWith('.ts')
    ? join(resolve(__dirname, '../../../..'), 'dist/libs/sandbox/src/thread', ENTRY)
    : join(__dirname, ENTRY);
  if (!existsSync(path)) throw new SandboxStartError(`sandbox thread script not found at ${path}; run npm run build`);
  return path;
}
