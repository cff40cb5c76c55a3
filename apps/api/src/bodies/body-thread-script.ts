import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ENTRY = 'body-thread.js';

/**
 * The body thread's entry script: this file's sibling in the built code; from TypeScript sources
 * (ts-jest) the copy `npm run build` put under `dist/`.
 */
export function bodyThreadScriptPath(): string {
  const path = __filename.endsWith('.ts')
    ? join(resolve(__dirname, '../../../..'), 'dist/apps/api/src/bodies', ENTRY)
    : join(__dirname, ENTRY);
  if (!existsSync(path)) throw new Error(`body thread script not found at ${path}; run npm run build`);
  return path;
}
