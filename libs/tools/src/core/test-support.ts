import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Temporary workspace for core tool specs: `<tmp>/<prefix>-xxxx/ws`, with a sibling `outside/`
 * directory holding a secret, so escape attempts have something real to reach for. */
export interface TestWorkspace {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  write(relative: string, content: string | Buffer): Promise<string>;
  cleanup(): Promise<void>;
}

export async function createTestWorkspace(prefix = 'codemode-tools'): Promise<TestWorkspace> {
  const base = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
  return {
    base,
    root,
    outside,
    async write(relative, content) {
      const file = path.join(root, relative);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
      return file;
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}
