import { checkExecInput } from './exec-input';
import { SHELL_SOURCE_ERROR } from './messages';
import { isShellShaped } from './shell-shape';
import { SHELL_COMMAND_NAMES } from './shell-commands';

/** SPEC §3's own examples. */
const SPEC_SHELL = ['ls -la /workspace/', 'git status', 'pwd;', 'NODE_ENV=test npm test', 'ls > output', 'pwd', '#!/bin/sh\npwd'];
const SPEC_JAVASCRIPT = [
  'const ls = 7; return ls;',
  'pwd; var { pwd } = { pwd: 7 }; return pwd;',
  'true;',
  'false',
  'return 1+1',
  'console.log("ls -la")',
];

/** OpenClaw's shell examples that SPEC §3 refuses the same way. */
const OPENCLAW_SHELL = [
  'ls',
  'ls -1',
  'ls /var/log',
  'pwd; // inspect the workspace',
  '# inspect the workspace\n# then report it\npwd',
  '#!/usr/bin/env bash\nset -euo pipefail\npwd',
  'pwd\nls -la /workspace',
  'pwd;ls -la /workspace',
  'pwd && ls /workspace',
  'pwd||ls /workspace',
  'echo hello',
  'echo listing; ls /workspace/ 2>&1 || echo failed',
  'ls /workspace/ > /tmp/wlist.txt 2>&1; cat /tmp/wlist.txt',
  '/bin/ls /workspace/',
  '/usr/local/bin/python3 script.py',
  "sh -c 'ls /workspace/'",
  'export FOO=bar',
  'env FOO=bar node script.js',
  'NODE_ENV=test\nnpm test',
  'FOO=bar\r\n  npm test',
  'FOO=bar BAR=baz node --version',
  'GREETING="hello world" npm test',
  'EMPTY= npm test',
  String.raw`A="\\" ls "file" argument`,
  String.raw`A="\\" B='a b' ls "file" argument`,
  'A=\\😀\r\n  ls -1',
  '// inspect the workspace\npwd',
  '/* inspect the workspace */ pwd;',
  '// use a clean environment\nNODE_ENV=test npm test',
  'git status; const note = "function git";',
  'ls -1; const metadata = { ls: true };',
  // A class is not one of SPEC's declarations (var, let, const, function), as in OpenClaw.
  'pwd; class/**/pwd {}',
  'if [ -d /workspace ]; then pwd; fi',
  'if [[ -d /workspace ]]; then pwd; fi',
  'while test -d /workspace; do pwd; done',
  'for file in /workspace/*; do echo "$file"; done',
  'for ((i=0; i<3; i++)); do echo "$i"; done',
  'function task { pwd; }',
  'jq . file.json',
  'ls>output',
  'ls>>output',
  'ls 2> error',
  'ls < input',
  'find /workspace -maxdepth 1 -type f -o -type d | head -50',
  'cat /workspace/HEARTBEAT.md',
  'dir /workspace',
];

/** Further shell shapes: prefixes, separators, the additions to OpenClaw's command set. */
const MORE_SHELL = [
  '/usr/bin/git log --oneline',
  'pwd &&',
  'ls | wc -l',
  'cd /workspace && npm install',
  'apt-get install -y jq',
  'ssh host uptime',
  'diff -u a b',
  'ls -la\nreturn 1',
  'until [ -f done ]; do sleep 1; done',
  'case "$x" in a) echo a;; esac',
  'for((i=0;i<3;i++))\ndo echo $i; done',
  '  \n\t pwd  \n',
  '#!/usr/bin/env node\nreturn 1',
  'rg -n TODO src',
  'curl -s https://example.com',
  'sudo rm -rf /tmp/x',
  'jq .name package.json',
];

/** OpenClaw's JavaScript examples: none of them is refused. */
const OPENCLAW_JAVASCRIPT = [
  '',
  '42;',
  '"ls /workspace";',
  'return 7;',
  "return /foo/.test('foo');",
  'Infinity -1; return 42;',
  'eval; return typeof eval;',
  'if (true) { return -1; }',
  'while (false) { return 7; }',
  'for (let i = 0; i < 3; i++) { if (i === 2) { return i; } }',
  'function task() { return 7; } return task();',
  'const value = ;',
  'value || fallback',
  'value | mask',
  'value > limit',
  "/foo/.test('foo')",
  "ls('workspace')",
  'ls .call(null)',
  "ls ?.('workspace')",
  'ls = 7',
  'ls + count',
  'ls -1; function ls() {}',
  'ls -1; function/**/ls() {}',
  'echo `hello`; function echo(parts) { return parts[0]; }',
  'pwd\nfunction pwd() {}',
  'pwd; var [pwd] = [7]; return pwd;',
  'pwd; var { nested: { pwd } } = { nested: { pwd: 7 } }; return pwd;',
  'pwd; for (var pwd of [7]) {} return pwd;',
  'pwd; var other = 1, pwd = 7; return pwd;',
  'pwd; function* pwd() { yield 7; }',
  'pwd; function/**/\u002a/**/pwd() { yield 7; }',
  'pwd; var/**/{ pwd } = { pwd: 7 }; return pwd;',
  'node -version; function/**/node() {}; var version = 1;',
  'ls > limit; function ls() {} var limit = 1;',
  'test instanceof Function; function test() {}',
  'export const answer = 7;',
  'export abstract class Example {}',
  'export = Example;',
  'export async function read() {}',
  'export { answer };',
  "export * from './types';",
  'const result = await exec({ command: "ls" }); return result;',
  "console.log(await read({ path: '/workspace' }));",
  '// shell documentation: ls /workspace\nreturn 7;',
  '/* typed module */ export interface Result { value: number }',
  'return 7;',
  'const result = await tools.callValue("exec", { command: "ls /workspace" });\nreturn result;',
];

/** Further JavaScript that starts with a command name or looks shell-ish. */
const MORE_JAVASCRIPT = [
  'await ls({ path: "/workspace" })',
  'return await grep({ pattern: "x" });',
  'pwd; let pwd = 1;',
  'ls -1; const { a: [ls] } = { a: [1] };',
  'ls -1; var { ...ls } = {};',
  'ls -1; var [, ...ls] = [];',
  'ls -1; var { ls = 2 } = {};',
  'testing -1',
  'ls-1',
  'lsx -la',
  'LS -la',
  'NODE_ENV=test',
  'A="unterminated npm test',
  'if (x) { pwd }',
  'for (const x in y) {}',
  '/* unterminated comment',
];

/**
 * OpenClaw also refuses an unknown first word with shell arguments and a bare executable path.
 * SPEC §3 names only known commands ("Anything else is JavaScript"), so these fall through:
 * most end as a syntax error, `some_cli /workspace/file` parses (as division) and runs.
 */
const OPENCLAW_ONLY_SHELL = [
  "GREETING='hello world' ./gradlew test",
  'custom-tool --format=json',
  'some_cli /workspace/file',
  './gradlew test',
  '.\\gradlew.bat test',
  'C:\\workspace\\run.cmd /q',
  '../bin/task --verbose',
  '/opt/homebrew/bin/tool --version',
  '~/bin/task',
];

/** SPEC §3 counts `let`/`const` declarations too; OpenClaw only hoisted `var`/`function` ones. */
const SPEC_ONLY_JAVASCRIPT = ['ls -1; let ls = 7;', 'ls -1; const ls = 7;', 'pwd\n{ let pwd = 1 }'];

describe('isShellShaped', () => {
  it.each([...SPEC_SHELL, ...OPENCLAW_SHELL, ...MORE_SHELL])('refuses %j', (code) => {
    expect(isShellShaped(code)).toBe(true);
  });

  it.each([...SPEC_JAVASCRIPT, ...OPENCLAW_JAVASCRIPT, ...MORE_JAVASCRIPT])('runs %j', (code) => {
    expect(isShellShaped(code)).toBe(false);
  });

  it.each(OPENCLAW_ONLY_SHELL)('leaves %j to the JavaScript checks (unknown command or path)', (code) => {
    expect(isShellShaped(code)).toBe(false);
  });

  it.each(SPEC_ONLY_JAVASCRIPT)('runs %j: the name is declared', (code) => {
    expect(isShellShaped(code)).toBe(false);
  });

  it.each([...SPEC_SHELL, 'echo hello', 'ls -1', '/bin/ls /workspace/'])('exec answers %j with the exact message', (code) => {
    expect(checkExecInput({ title: 't', code })).toEqual({ ok: false, error: SHELL_SOURCE_ERROR });
  });

  it.each(['const ls = 7; return ls;', 'pwd; var { pwd } = { pwd: 7 }; return pwd;', 'true;', 'return 1+1'])('exec accepts %j', (code) => {
    expect(checkExecInput({ title: 't', code }).ok).toBe(true);
  });

  it('knows about 140 commands, never true or false, with the SPEC examples', () => {
    expect(SHELL_COMMAND_NAMES.size).toBe(140);
    expect(SHELL_COMMAND_NAMES.has('true')).toBe(false);
    expect(SHELL_COMMAND_NAMES.has('false')).toBe(false);
    for (const name of ['ls', 'pwd', 'cd', 'cat', 'echo', 'git', 'npm', 'node', 'rg', 'grep', 'jq', 'curl', 'sudo']) {
      expect(SHELL_COMMAND_NAMES.has(name)).toBe(true);
    }
  });

  it.each(['/bin/', '/usr/bin/', '/usr/local/bin/'])('recognizes commands under %s', (prefix) => {
    expect(isShellShaped(`${prefix}pwd`)).toBe(true);
    expect(isShellShaped(`${prefix}cat /etc/hosts`)).toBe(true);
    expect(isShellShaped(`${prefix}true`)).toBe(false);
  });
});

describe('isShellShaped stays linear on hostile input', () => {
  const cpuMs = (run: () => void): number => {
    // CPU time of this process: the machine is shared, wall time would measure the neighbours.
    const started = process.cpuUsage();
    run();
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 1000;
  };

  it.each([
    ['repeated quotes', `A=${'""'.repeat(22)}`, false],
    ['escaped quotes', `A="${'\\"'.repeat(32_000)}`, false],
    ['a long chain of assignments', `${'A=x '.repeat(32_000)}ls -1`, true],
    ['a huge unterminated double-quoted value', `A="${'x '.repeat(300_000)}`, false],
    ['many comments', `${'/* c */ '.repeat(50_000)}pwd`, true],
    ['a long for (( header', `for ((${'i'.repeat(200_000)}`, false],
  ])('%s', (_name, code, expected) => {
    let result: boolean | undefined;
    expect(cpuMs(() => (result = isShellShaped(code)))).toBeLessThan(1000);
    expect(result).toBe(expected);
  });
});
