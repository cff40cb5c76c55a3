import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The version in the root package.json, found from source or from dist; in the packed
 * @codemode/client (libs/client/package.json, kept at the root's version) its own package.json.
 */
export function packageVersion(): string {
  for (const up of ['../../..', '../../../..']) {
    try {
      const pkg = JSON.parse(readFileSync(join(__dirname, up, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if ((pkg.name === 'codemode-backend' || pkg.name === '@codemode/client') && pkg.version) return pkg.version;
    } catch {
      // try the next level up
    }
  }
  return '0.0.0';
}
