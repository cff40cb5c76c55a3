import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { chmod, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { runCoreTool } from './run-core-tool';
import { createTestWorkspace, type TestWorkspace } from './test-support';

describe('runCoreTool', () => {
  let ws: TestWorkspace;
  const run = (name: string, input: unknown) => runCoreTool(name, input, { workspaceRoot: ws.root });

  beforeEach(async () => {
    ws = await createTestWorkspace();
  });
  afterEach(() => ws.cleanup());

  describe('read', () => {
    it('reads a whole small file', async () => {
      await ws.write('notes.txt', 'one\ntwo\nthree\n');
      await expect(run('read', { path: 'notes.txt' })).resolves.toEqual({
        path: 'notes.txt',
        content: 'one\ntwo\nthree',
        startLine: 1,
        endLine: 3,
        totalLines: 3,
        truncated: false,
      });
    });

    it('pages with offset and limit and says how to continue', async () => {
      await ws.write('notes.txt', 'one\ntwo\nthree\nfour\n');
      await expect(run('read', { path: 'notes.txt', offset: 2, limit: 2 })).resolves.toEqual({
        path: 'notes.txt',
        content: 'two\nthree',
        startLine: 2,
        endLine: 3,
        totalLines: 4,
        truncated: false,
        nextOffset: 4,
        notice: '[1 more lines in file. Use offset=4 to continue.]',
      });
      await expect(run('read', { path: 'notes.txt', offset: 9 })).rejects.toThrow(
        'Offset 9 is beyond end of file (4 lines total). Use an offset from 1 to 4.',
      );
    });

    it('stops at 2000 lines', async () => {
      await ws.write('big.txt', Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join('\n'));
      const result = await run('read', { path: 'big.txt' });
      expect(result).toMatchObject({ startLine: 1, endLine: 2000, totalLines: 2500, truncated: true, nextOffset: 2001 });
      expect(result).toHaveProperty('notice', '[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]');
    });

    it('stops at 50 KB of whole lines', async () => {
      await ws.write('wide.txt', Array.from({ length: 200 }, () => 'x'.repeat(1000)).join('\n'));
      const result = await run('read', { path: 'wide.txt' });
      expect(result).toMatchObject({ startLine: 1, endLine: 51, truncated: true, nextOffset: 52 });
      expect(result).toHaveProperty('notice', '[Showing lines 1-51 of 200 (50.0KB limit). Use offset=52 to continue.]');
    });

    it('shows the head of a single line over 50 KB', async () => {
      await ws.write('one-line.txt', 'y'.repeat(80_000));
      const result = await run('read', { path: 'one-line.txt' });
      expect(result).toMatchObject({ truncated: true, endLine: 1 });
      expect((result as { content: string }).content).toHaveLength(50 * 1024);
    });

    it('reads lines across its 1 MiB chunks as split on newlines, CRLF and multi-byte characters included', async () => {
      // 1000-byte lines: the first chunk ends inside an é. 17-byte lines: it ends between a \r and its \n.
      const wide = Array.from({ length: 3000 }, (_, i) => `${String(i + 1).padStart(6, '0')} ${'é'.repeat(300)}${'x'.repeat(391)}`);
      const narrow = Array.from({ length: 70_000 }, (_, i) => String(i + 1).padStart(15, '0'));
      await ws.write('wide.txt', `${wide.join('\r\n')}\r\n`);
      await ws.write('narrow.txt', `${narrow.join('\r\n')}\r\n`);
      const cases: Array<[string, string[], number]> = [
        ['wide.txt', wide, 1],
        ['wide.txt', wide, 1040],
        ['wide.txt', wide, 2961],
        ['narrow.txt', narrow, 61_670],
        ['narrow.txt', narrow, 69_990],
      ];
      for (const [file, lines, offset] of cases) {
        const result = (await run('read', { path: file, offset, limit: 40 })) as { content: string; totalLines: number };
        expect(result.totalLines).toBe(lines.length);
        expect(result.content).toBe(lines.slice(offset - 1, offset - 1 + 40).join('\n'));
      }
    });

    it('keeps the event loop turning while it reads a 64 MiB file of newlines', async () => {
      await ws.write('lines.txt', Buffer.alloc(64 * 1024 * 1024, '\n'));
      let last = performance.now();
      let longest = 0;
      const probe = setInterval(() => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      }, 1);
      try {
        await expect(run('read', { path: 'lines.txt', offset: 64 * 1024 * 1024, limit: 1 })).resolves.toMatchObject({
          totalLines: 64 * 1024 * 1024,
          content: '',
        });
        longest = Math.max(longest, performance.now() - last);
      } finally {
        clearInterval(probe);
      }
      // The whole-file split it replaced held the loop for 10-18 s; slices are 8 ms (loose for loaded machines).
      expect(longest).toBeLessThan(1000);
    });

    it('refuses directories and binary files with guidance', async () => {
      await ws.write('dir/a.txt', 'a');
      await ws.write('blob.bin', Buffer.from([0x89, 0x50, 0x00, 0x01]));
      await expect(run('read', { path: 'dir' })).rejects.toThrow('Is a directory: dir. Use ls to list it, or read a file inside it.');
      await expect(run('read', { path: 'blob.bin' })).rejects.toThrow('Binary file: blob.bin (4 bytes); read returns text only.');
    });

    it('validates input naming the field', async () => {
      await expect(run('read', {})).rejects.toThrow('Invalid read input: path: is required');
      await expect(run('read', { path: 'a', offset: 0 })).rejects.toThrow('Invalid read input: offset: must be at least 1');
      await expect(run('read', { path: 'a', limit: 1.5 })).rejects.toThrow('Invalid read input: limit: must be an integer');
      await expect(run('read', { path: 7 })).rejects.toThrow('Invalid read input: path: must be a string');
      await expect(run('read', 'notes.txt')).rejects.toThrow('Invalid read input: input: must be an object');
    });
  });

  describe('escapes', () => {
    it.each([
      ['read', { path: '../outside/secret.txt' }],
      ['read', { path: '../../../../../../etc/passwd' }],
      ['read', { path: '/etc/passwd' }],
      ['read', { path: 'src/../../outside/secret.txt' }],
      ['ls', { path: '..' }],
      ['ls', { path: '/etc' }],
      ['find', { pattern: '*', path: '../outside' }],
      ['grep', { pattern: 'secret', path: '../outside' }],
      ['grep', { pattern: 'root', path: '/etc' }],
    ])('%s %j is refused', async (name, input) => {
      await expect(run(name, input)).rejects.toMatchObject({
        code: 'path_outside_workspace',
        message: `path escapes the workspace: ${input.path}`,
      });
    });

    it('refuses symlinks to /etc/passwd, to outside directories and chains ending outside, with the SPEC message', async () => {
      await symlink('/etc/passwd', path.join(ws.root, 'passwd'));
      await symlink(ws.outside, path.join(ws.root, 'outside-dir'));
      await symlink(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'hop-2'));
      await symlink('hop-2', path.join(ws.root, 'hop-1'));
      const refusals: Array<[string, Record<string, unknown>, string]> = [
        ['read', { path: 'passwd' }, 'passwd'],
        ['read', { path: 'outside-dir/secret.txt' }, 'outside-dir/secret.txt'],
        ['read', { path: 'hop-1' }, 'hop-1'],
        ['ls', { path: 'outside-dir' }, 'outside-dir'],
        ['find', { pattern: '*', path: 'outside-dir' }, 'outside-dir'],
        ['grep', { pattern: 'secret', path: 'outside-dir' }, 'outside-dir'],
        ['grep', { pattern: 'root', path: 'passwd' }, 'passwd'],
      ];
      for (const [name, input, shown] of refusals) {
        await expect(run(name, input)).rejects.toThrow(new Error(`path escapes the workspace: ${shown}`));
      }
    });

    it('never follows symlinks out of the workspace in walks, but follows those that stay inside', async () => {
      await symlink('/etc', path.join(ws.root, 'etc-link'));
      await symlink(ws.outside, path.join(ws.root, 'outside-dir'));
      await symlink(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'secret-link.txt'));
      await ws.write('inside.txt', 'secret inside\n');
      await symlink(path.join(ws.root, 'inside.txt'), path.join(ws.root, 'inside-link.txt'));
      await expect(run('read', { path: 'inside-link.txt' })).resolves.toMatchObject({ content: 'secret inside' });
      const grep = await run('grep', { pattern: 'secret|root' });
      expect(grep).toEqual({
        matches: [
          { path: 'inside-link.txt', line: 1, text: 'secret inside' },
          { path: 'inside.txt', line: 1, text: 'secret inside' },
        ],
        truncated: false,
      });
      const find = await run('find', { pattern: '*' });
      expect((find as { files: string[] }).files).toEqual(['inside-link.txt', 'inside.txt']);
      const ls = await run('ls', {});
      expect((ls as { entries: string[] }).entries).toEqual([
        'etc-link',
        'inside-link.txt',
        'inside.txt',
        'outside-dir',
        'secret-link.txt',
      ]);
    });

    it('never opens a FIFO planted in the workspace: read refuses it at once, walks skip it', async () => {
      execFileSync('mkfifo', [path.join(ws.root, 'pipe')]);
      await ws.write('notes.txt', 'a note\n');
      await expect(run('read', { path: 'pipe' })).rejects.toThrow(
        new Error('Not a regular file: pipe (a FIFO, socket or device); read returns regular files only.'),
      );
      await expect(run('grep', { pattern: 'note' })).resolves.toEqual({
        matches: [{ path: 'notes.txt', line: 1, text: 'a note' }],
        truncated: false,
      });
      await expect(run('grep', { pattern: 'note', path: 'pipe' })).resolves.toEqual({ matches: [], truncated: false });
      await expect(run('find', { pattern: '*' })).resolves.toMatchObject({ files: ['notes.txt'] });
      await expect(run('ls', {})).resolves.toMatchObject({ entries: ['notes.txt', 'pipe'] });
    });

    it('never prints the host workspace path in errors', async () => {
      const messages = await Promise.all(
        [
          run('read', { path: 'missing.txt' }),
          run('read', { path: '../x' }),
          run('read', { path: 'src/../../outside/secret.txt' }),
          run('ls', { path: 'missing' }),
        ].map((promise) =>
          promise.then(
            () => '',
            (error: Error) => error.message,
          ),
        ),
      );
      for (const message of messages) {
        expect(message).not.toContain(ws.base);
      }
    });

    it('maps file system failures to errno codes without host paths', async () => {
      if (process.getuid?.() === 0) {
        return; // root reads anything; nothing to refuse
      }
      const file = await ws.write('locked.txt', 'x');
      await chmod(file, 0o000);
      await expect(run('read', { path: 'locked.txt' })).rejects.toThrow('read could not access a workspace path (EACCES).');
    });
  });

  describe('ls', () => {
    it('lists dotfiles and directories sorted case-insensitively', async () => {
      await ws.write('b.txt', '');
      await ws.write('A.txt', '');
      await ws.write('.env', '');
      await ws.write('src/x.ts', '');
      await expect(run('ls', {})).resolves.toEqual({ path: '.', entries: ['.env', 'A.txt', 'b.txt', 'src/'], truncated: false });
      await expect(run('ls', { path: 'src' })).resolves.toEqual({ path: 'src', entries: ['x.ts'], truncated: false });
    });

    it('honours limit and says so', async () => {
      for (const name of ['a', 'b', 'c']) {
        await ws.write(name, '');
      }
      await expect(run('ls', { limit: 2 })).resolves.toEqual({
        path: '.',
        entries: ['a', 'b'],
        truncated: true,
        notice: '[2 entries limit reached. Use limit=4 for more]',
      });
    });

    it('refuses files', async () => {
      await ws.write('a.txt', '');
      await expect(run('ls', { path: 'a.txt' })).rejects.toThrow('Not a directory: a.txt. Use read to read a file.');
    });

    it('lists a directory too large to read in one go (in batches) as it lists a small one', async () => {
      const names = Array.from({ length: 700 }, (_, i) => `file-${String(i).padStart(4, '0')}.txt`);
      for (const name of names) await ws.write(`big/${name}`, '');
      await ws.write('big/sub/x', '');
      // Past one 4 KiB block (ext4, xfs) or ~200 tmpfs entries: the batched read.
      expect(statSync(path.join(ws.root, 'big')).size).toBeGreaterThan(4096);
      await expect(run('ls', { path: 'big', limit: 1000 })).resolves.toEqual({
        path: 'big',
        entries: [...names, 'sub/'],
        truncated: false,
      });
    });
  });

  describe('find', () => {
    beforeEach(async () => {
      await ws.write('package.json', '{}');
      await ws.write('src/app.ts', '');
      await ws.write('src/app.spec.ts', '');
      await ws.write('src/lib/util.ts', '');
      await ws.write('node_modules/dep/index.ts', '');
      await ws.write('.git/config.ts', '');
    });

    it('walks at most 64 levels below its start and says so', async () => {
      const deep = Array.from({ length: 70 }, () => 'd').join('/');
      await mkdir(path.join(ws.root, 'deep', deep), { recursive: true });
      await ws.write(`deep/${deep}/bottom.txt`, 'x');
      const result = (await run('find', { pattern: 'bottom.txt', path: 'deep' })) as {
        files: string[];
        truncated: boolean;
        notice?: string;
      };
      expect(result).toMatchObject({ files: [], truncated: true });
      expect(result.notice).toContain('Directories more than 64 levels deep were not searched; pass a deeper path');
      await expect(run('find', { pattern: 'bottom.txt', path: `deep/${deep.slice(0, 20 * 2)}` })).resolves.toMatchObject({
        files: [`deep/${deep}/bottom.txt`],
        truncated: false,
      });
    });

    it('matches names at any depth, skipping .git and node_modules', async () => {
      await expect(run('find', { pattern: '*.ts' })).resolves.toEqual({
        path: '.',
        files: ['src/app.spec.ts', 'src/app.ts', 'src/lib/util.ts'],
        truncated: false,
      });
    });

    it('matches relative paths when the pattern has a slash, under a search path', async () => {
      await expect(run('find', { pattern: 'src/**/*.spec.ts' })).resolves.toMatchObject({ files: ['src/app.spec.ts'] });
      await expect(run('find', { pattern: 'lib/*.ts', path: 'src' })).resolves.toEqual({
        path: 'src',
        files: ['src/lib/util.ts'],
        truncated: false,
      });
      await expect(run('find', { pattern: 'lib' })).resolves.toMatchObject({ files: ['src/lib/'] });
    });

    it('honours limit', async () => {
      await expect(run('find', { pattern: '*.ts', limit: 2 })).resolves.toEqual({
        path: '.',
        files: ['src/app.spec.ts', 'src/app.ts'],
        truncated: true,
        notice: '[2 results limit reached. Use limit=4 for more, or refine pattern]',
      });
    });
  });

  describe('grep', () => {
    beforeEach(async () => {
      await ws.write('src/a.ts', 'const alpha = 1;\nconst beta = 2;\nexport { alpha, beta };\n');
      await ws.write('src/b.js', 'Alpha();\n');
      await ws.write('docs/readme.md', 'alpha (a+b)\n');
    });

    it('finds regex matches with paths and line numbers', async () => {
      await expect(run('grep', { pattern: 'alpha\\b' })).resolves.toEqual({
        matches: [
          { path: 'docs/readme.md', line: 1, text: 'alpha (a+b)' },
          { path: 'src/a.ts', line: 1, text: 'const alpha = 1;' },
          { path: 'src/a.ts', line: 3, text: 'export { alpha, beta };' },
        ],
        truncated: false,
      });
    });

    it('supports ignoreCase, literal, glob (and include), path and context', async () => {
      await expect(run('grep', { pattern: 'alpha', ignoreCase: true, glob: '*.js' })).resolves.toMatchObject({
        matches: [{ path: 'src/b.js', line: 1 }],
      });
      await expect(run('grep', { pattern: 'alpha', include: '*.md' })).resolves.toMatchObject({ matches: [{ path: 'docs/readme.md' }] });
      await expect(run('grep', { pattern: '(a+b)', literal: true })).resolves.toMatchObject({
        matches: [{ path: 'docs/readme.md', text: 'alpha (a+b)' }],
      });
      await expect(run('grep', { pattern: 'beta = 2', path: 'src/a.ts', context: 1 })).resolves.toEqual({
        matches: [{ path: 'src/a.ts', line: 2, text: 'const beta = 2;', before: ['const alpha = 1;'], after: ['export { alpha, beta };'] }],
        truncated: false,
      });
    });

    it('honours limit and cuts long lines', async () => {
      await ws.write('long.txt', `${'z'.repeat(600)}\nz\nz\n`);
      const result = await run('grep', { pattern: 'z', path: 'long.txt', limit: 2 });
      expect(result).toMatchObject({
        truncated: true,
        notice:
          '[2 matches limit reached. Use limit=4 for more, or refine pattern. Some lines truncated to 500 chars. Use read tool to see full lines]',
      });
      expect((result as { matches: Array<{ text: string }> }).matches[0]?.text).toHaveLength(503);
    });

    it('reports invalid regexes, naming RE2 limits', async () => {
      await expect(run('grep', { pattern: '(unclosed' })).rejects.toThrow(
        /^grep pattern is not a valid regular expression: .*Pass literal: true/u,
      );
      await expect(run('grep', { pattern: 'alpha(?!bet)' })).rejects.toThrow(/lookaround and backreferences are not supported/u);
    });

    it('returns no matches as an empty list', async () => {
      await expect(run('grep', { pattern: 'nothing-here' })).resolves.toEqual({ matches: [], truncated: false });
    });
  });

  describe('hostile patterns', () => {
    const evilGlob = `${'a*'.repeat(14)}b`;

    it('matches (a+)+$ against a 30 000-character line in linear time', async () => {
      await ws.write('evil.txt', `${'a'.repeat(30_000)}b\n`);
      await expect(run('grep', { pattern: '(a+)+$', path: 'evil.txt' })).resolves.toEqual({ matches: [], truncated: false });
    });

    it('matches a backtracking-bomb glob against long names in find and grep', async () => {
      await ws.write(`${'a'.repeat(250)}/${'a'.repeat(250)}`, 'a\n');
      await expect(run('find', { pattern: evilGlob })).resolves.toEqual({ path: '.', files: [], truncated: false });
      await expect(run('find', { pattern: `**/${evilGlob}` })).resolves.toEqual({ path: '.', files: [], truncated: false });
      await expect(run('grep', { pattern: 'a', glob: evilGlob })).resolves.toEqual({ matches: [], truncated: false });
    });

    it('fails a grep whose matching overruns the 1 s budget with the SPEC message', async () => {
      let seed = 1;
      const line = Array.from({ length: 400_000 }, () => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed & 0x10000 ? 'a' : 'b';
      }).join('');
      await ws.write('long-line.txt', `${line}\n`);
      const pattern = '(a|b)*a(a|b){1000}$';
      await expect(run('grep', { pattern, path: 'long-line.txt' })).rejects.toMatchObject({
        code: 'pattern_too_expensive',
        message: `pattern too expensive: ${pattern}`,
      });
    });

    it('refuses globs too long to match cheaply with the SPEC message', async () => {
      const glob = '?'.repeat(600);
      await expect(run('find', { pattern: glob })).rejects.toThrow(new Error(`pattern too expensive: ${glob}`));
      await expect(run('grep', { pattern: 'a', include: glob })).rejects.toThrow(new Error(`pattern too expensive: ${glob}`));
    });
  });

  it('refuses tools it does not run', async () => {
    await expect(run('exec', { command: 'ls' })).rejects.toThrow(
      'Unknown workspace tool: exec. Workspace tools are read, ls, find and grep.',
    );
  });
});
