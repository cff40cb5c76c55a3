#!/usr/bin/env node
'use strict';
// Compiles apps, libs and benches to dist/ and rewrites the @codemode/* path aliases to relative
// requires, so the built code runs on plain Node with no loader. Runs on `npm ci` (prepare).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });

// Compiled in place (no clean first): processes and threads already running from dist/ keep
// finding their files while a rebuild happens. A deleted source leaves a stale, unused .js behind.
run(bin('tsc'), ['-p', 'tsconfig.build.json']);
run(bin('tsc-alias'), ['-p', 'tsconfig.build.json']);
for (const lua of listFiles(path.join(root, 'libs'), '.lua')) {
  const target = path.join(root, 'dist', path.relative(root, lua));
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(lua, target);
}
fs.writeFileSync(path.join(root, 'dist', '.built-at'), new Date().toISOString());

function listFiles(dir, ext) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(full, ext));
    else if (entry.name.endsWith(ext)) out.push(full);
  }
  return out;
}
