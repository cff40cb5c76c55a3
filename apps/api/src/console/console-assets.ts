import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/** One built file of the console, held in memory: the whole console is a few tens of KiB. */
export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Where `npm run build` puts the console: `dist/console`, next to `dist/apps`. This module runs
 * from `dist/apps/api/src/console`, so four levels up is `dist/`.
 */
export const CONSOLE_ASSET_DIR = join(__dirname, '..', '..', '..', '..', 'console');

/**
 * Reads the built console once, at start-up: the files served are exactly those the build made
 * (a name from a request is only ever a key into this map, never a path). Null when the console
 * was not built.
 */
export function loadConsoleAssets(dir = CONSOLE_ASSET_DIR): ReadonlyMap<string, ConsoleAsset> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, ConsoleAsset>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const contentType = CONTENT_TYPES[extname(entry.name)];
    if (entry.isFile() && contentType) assets.set(entry.name, { body: readFileSync(join(dir, entry.name)), contentType });
  }
  return assets;
}
