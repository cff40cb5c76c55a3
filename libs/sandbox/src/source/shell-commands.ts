/**
 * Command names that, as the first word of a cell, mark it as a shell command typed into the
 * wrong tool (SPEC §3: "about 140 common ones"): the 119 OpenClaw recognizes, so a model gets
 * the same answer from both, plus 21 more everyday ones (`apt-get`, `diff`, `ssh`, …). A name
 * here only refuses a cell that does not declare it. `true` and `false` are deliberately
 * absent: they are JavaScript literals first.
 */
export const SHELL_COMMAND_NAMES: ReadonlySet<string> = new Set([
  // OpenClaw's set.
  'alias', 'apt', 'awk', 'bash', 'bg', 'brew', 'builtin', 'bun',
  'cargo', 'cat', 'cd', 'chmod', 'cmd', 'command', 'cp', 'curl', 'cut',
  'date', 'declare', 'df', 'dir', 'docker', 'dotnet', 'du',
  'echo', 'env', 'exec', 'exit', 'export',
  'fg', 'file', 'find',
  'getopts', 'git', 'go', 'gradle', 'grep',
  'hash', 'head', 'help', 'hostname',
  'id',
  'java', 'javac', 'jobs', 'jq',
  'kill', 'kubectl',
  'ln', 'local', 'logout', 'ls',
  'make', 'mkdir', 'mv', 'mvn',
  'node', 'npm', 'npx',
  'perl', 'php', 'pip', 'pip3', 'pnpm', 'poetry', 'popd', 'powershell', 'printf', 'ps', 'pushd',
  'pwd', 'pwsh', 'pytest', 'python', 'python3',
  'read', 'readonly', 'rg', 'rm', 'ruby', 'rustc', 'rustup',
  'sed', 'set', 'sh', 'shift', 'sleep', 'sort', 'source', 'stat', 'sudo', 'swift', 'systemctl',
  'tail', 'tar', 'tee', 'test', 'touch', 'trap', 'tree', 'type',
  'ulimit', 'umask', 'uname', 'uniq', 'unset', 'unzip', 'uv', 'uvx',
  'vitest',
  'wait', 'wc', 'wget', 'which', 'whoami',
  'xargs',
  'yarn',
  'zip', 'zsh',
  // Everyday additions.
  'apt-get', 'basename', 'chown', 'clear', 'cmake', 'deno', 'diff', 'dirname', 'gcc', 'gzip',
  'history', 'less', 'lsof', 'more', 'nano', 'pkill', 'rsync', 'scp', 'ssh', 'tsc', 'vim',
]);
