import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { twoTenantProbe, victimHarm } from '../utils/two-tenant-probe';
import { ATTEMPT, confinementTenants, escapes, TAG, type Outcome } from './confinement-tenants';

/**
 * SPEC §10, adversarially (setup and leak check in test/tenancy/confinement-tenants.ts): the file
 * tools refuse every way out of the workspace, and no pattern stalls the worker for beta.
 */

jest.setTimeout(60_000);

describe('tenancy: two tenants cannot escape their confinement (SPEC §10)', () => {
  const tenants = confinementTenants();
  const { sh, cell, completedValue, betaUnaffectedAndNothingLeaked } = tenants;

  describe('File tools', () => {
    it('symlinks made by a shell command, absolute paths and .. are refused with "path escapes the workspace: <path>"', async () => {
      const made = await sh('alpha', 'links', {
        command: 'ln -s /etc/passwd p; ln -s / root; ln -s ../.. up; mkdir -p d; echo inside > d/ok.txt; ln -s d/ok.txt good; echo made',
      });
      expect(made.details).toMatchObject({ status: 'completed', aggregated: 'made' });
      const value = completedValue(
        await cell(
          'alpha',
          'links',
          `${ATTEMPT}
          const names = (v) => v.entries;
          return {
            'read p': await attempt(() => read({ path: 'p' }), (v) => v.content.slice(0, 40)),
            'ls root': await attempt(() => ls({ path: 'root' }), names),
            'ls up': await attempt(() => ls({ path: 'up' }), names),
            'find root/etc': await attempt(() => find({ pattern: 'passwd', path: 'root/etc' }), (v) => v.files),
            'grep p': await attempt(() => grep({ pattern: 'root', path: 'p' }), (v) => v.matches.length),
            'grep up': await attempt(() => grep({ pattern: 'inside', path: 'up' }), (v) => v.matches.length),
            'read /etc/passwd': await attempt(() => read({ path: '/etc/passwd' }), (v) => v.content.slice(0, 40)),
            'read ../x': await attempt(() => read({ path: '../x' }), (v) => v.content),
            'read good': await attempt(() => read({ path: 'good' }), (v) => v.content.trim()),
          };`,
        ),
      );
      expect(value).toEqual({
        'read p': escapes('p'),
        'ls root': escapes('root'),
        'ls up': escapes('up'),
        'find root/etc': escapes('root/etc'),
        'grep p': escapes('p'),
        'grep up': escapes('up'),
        'read /etc/passwd': escapes('/etc/passwd'),
        'read ../x': escapes('../x'),
        'read good': { ok: true, value: 'inside' },
      });
      await betaUnaffectedAndNothingLeaked();
    });

    it('a find or grep over the whole workspace never returns what a symlink outside points to', async () => {
      const value = completedValue(
        await cell(
          'alpha',
          'links',
          `${ATTEMPT}
          return {
            grep: await attempt(() => grep({ pattern: ':0:0:', path: '.' }), (v) => v.matches.map((m) => m.path)),
            find: await attempt(() => find({ pattern: '**/passwd' }), (v) => v.files),
          };`,
        ),
      );
      for (const outcome of [value.grep, value.find]) {
        if (outcome.ok) expect(outcome.value).toEqual([]);
        else expect(outcome.message).toMatch(/^path escapes the workspace: /);
      }
      await betaUnaffectedAndNothingLeaked();
    });
  });

  describe('File tools: paths tell nothing (SPEC §10)', () => {
    it("links to beta's session paths answer the same whether the target exists or not, and nothing there is opened", async () => {
      const betaSession = join(tenants.stack.workspaceRoot, 'beta', 'vault');
      // The targets are real: beta's secret exists, and a host FIFO sits in beta's workspace (opened, it would block).
      expect(existsSync(join(betaSession, 'secret.txt'))).toBe(true);
      execFileSync('mkfifo', [join(betaSession, `pipe-${TAG}`)]);
      const targets: Record<string, string> = {
        'rel-exists': '../../beta/vault/secret.txt',
        'rel-missing': '../../beta/vault/no-such-file.txt',
        'rel-session': '../../beta/vault',
        'rel-no-session': '../../beta/no-such-session',
        'rel-fifo': `../../beta/vault/pipe-${TAG}`,
        'abs-exists': join(betaSession, 'secret.txt'),
        'abs-missing': join(betaSession, 'no-such-file.txt'),
        'abs-no-session': join(tenants.stack.workspaceRoot, 'beta', 'no-such-session'),
        'abs-fifo': join(betaSession, `pipe-${TAG}`),
      };
      const made = await sh('alpha', 'oracle', {
        command: `${Object.entries(targets)
          .map(([name, target]) => `ln -s '${target}' ${name}`)
          .join('; ')}; mkfifo own-pipe; echo made`,
      });
      expect(made.details).toMatchObject({ status: 'completed', aggregated: 'made' });
      const names = Object.keys(targets);
      const started = Date.now();
      const value = completedValue(
        await cell(
          'alpha',
          'oracle',
          `${ATTEMPT}
          const names = ${JSON.stringify(names)};
          const out = {};
          for (const name of names) {
            out['read ' + name] = await attempt(() => read({ path: name }), (v) => v.content);
            out['ls ' + name] = await attempt(() => ls({ path: name }), (v) => v.entries);
            out['find ' + name] = await attempt(() => find({ pattern: '*', path: name }), (v) => v.files);
            out['grep ' + name] = await attempt(() => grep({ pattern: 'canary', path: name }), (v) => v.matches);
            out['read ' + name + '/x'] = await attempt(() => read({ path: name + '/x' }), (v) => v.content);
          }
          out['read own-pipe'] = await attempt(() => read({ path: 'own-pipe' }), (v) => v.content);
          out['grep .'] = await attempt(() => grep({ pattern: 'canary', path: '.' }), (v) => v.matches);
          out['find .'] = await attempt(() => find({ pattern: '*' }), (v) => v.files);
          out['ls .'] = await attempt(() => ls({}), (v) => v.entries);
          return out;`,
        ),
      );
      const expected: Record<string, Outcome> = {};
      for (const name of names) {
        for (const call of ['read', 'ls', 'find', 'grep']) expected[`${call} ${name}`] = escapes(name);
        expected[`read ${name}/x`] = escapes(`${name}/x`);
      }
      expected['read own-pipe'] = {
        ok: false,
        message: 'Not a regular file: own-pipe (a FIFO, socket or device); read returns regular files only.',
      };
      expected['grep .'] = { ok: true, value: [] };
      expected['find .'] = { ok: true, value: [] };
      expected['ls .'] = { ok: true, value: [...names, 'own-pipe'].sort((a, b) => a.localeCompare(b)) };
      expect(value).toEqual(expected);
      // Nothing blocked on either FIFO (its open would wait for a writer forever).
      expect(Date.now() - started).toBeLessThan(20_000);
      await betaUnaffectedAndNothingLeaked();
    });
  });

  // Last on this stack: a worker that does stall on these patterns would stall every later test.
  describe('File tools: patterns', () => {
    const GLOB = `${'a*'.repeat(20)}b`;
    const REGEX = '(a+)+$';

    it('a catastrophic grep regex and find/grep globs answer (result or "pattern too expensive") while beta is served', async () => {
      const made = await sh('alpha', 'patterns', {
        command: `head -c 50000 /dev/zero | tr '\\0' a > long.txt; echo b >> long.txt; mkdir -p g; touch "g/$(head -c 200 /dev/zero | tr '\\0' a)"; echo made`,
      });
      expect(made.details).toMatchObject({ status: 'completed', aggregated: 'made' });
      const { attack: alpha, victim } = await twoTenantProbe(
        tenants.stack,
        { client: tenants.clients.beta, sessionId: 'beta-probe' },
        () =>
          cell(
            'alpha',
            'patterns',
            `${ATTEMPT}
        return {
          grep: await attempt(() => grep({ pattern: ${JSON.stringify(REGEX)}, path: 'long.txt' }), (v) => v.matches.length),
          find: await attempt(() => find({ pattern: ${JSON.stringify(GLOB)}, path: 'g' }), (v) => v.files),
          grepGlob: await attempt(() => grep({ pattern: 'a', path: 'g', glob: ${JSON.stringify(GLOB)} }), (v) => v.matches.length),
        };`,
            25_000,
          ),
        { stepTimeoutMs: 25_000 },
      );
      process.stdout.write(`beta under the patterns: ${JSON.stringify({ rounds: victim.rounds, read: victim.read, exec: victim.exec })}\n`);
      // Answered within beta's default 10 s budget: no pattern stalls the worker (timings not tightened).
      expect(victimHarm(victim, { maxP99Ms: 10_000 })).toEqual([]);
      expect(Math.max(victim.read.maxMs, victim.exec.maxMs)).toBeLessThan(10_000);

      const value = completedValue(alpha);
      const answered = (outcome: Outcome, pattern: string, empty: unknown) =>
        outcome.ok ? expect(outcome.value).toEqual(empty) : expect(outcome.message).toBe(`pattern too expensive: ${pattern}`);
      answered(value.grep, REGEX, 0);
      answered(value.find, GLOB, []);
      answered(value.grepGlob, GLOB, 0);
      await betaUnaffectedAndNothingLeaked();
    });
  });
});
