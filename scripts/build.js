#!/usr/bin/env node
'use strict';
// Compiles apps, libs and benches to dist/ and rewrites the @codemode/* path aliases to relative
// requires, so the built code runs on plain Node with no loader. Runs on `npm ci` (prepare).
// The build goes to a staging folder that replaces dist/ only when complete, so processes started
// while a rebuild runs never load half-written output (tsc writes aliases that tsc-alias fixes).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const staging = path.join(root, `dist.build-${process.pid}`);
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });

try {
  run(bin('tsc'), ['-p', 'tsconfig.build.json', '--outDir', staging]);
  run(bin('tsc-alias'), ['-p', 'tsconfig.build.json', '--outDir', staging]);
  // Files the code reads at run time, beside the compiled modules: Lua scripts and guest JavaScript.
  const libs = path.join(root, 'libs');
  for (const file of [...listFiles(libs, '.lua'), ...listFiles(libs, '.guest.js')]) {
    const target = path.join(staging, path.relative(root, file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(file, target);
  }
  buildConsole(path.join(staging, 'console'));
  fs.writeFileSync(path.join(staging, '.built-at'), new Date().toISOString());
  const old = `${dist}.old-${process.pid}`;
  if (fs.existsSync(dist)) fs.renameSync(dist, old);
  fs.renameSync(staging, dist);
  fs.rmSync(old, { recursive: true, force: true });
} finally {
  fs.rmSync(staging, { recursive: true, force: true });
}

// The operator console (console/): its TypeScript modules transpiled one by one to browser ES
// modules (type-checked by `npm run typecheck`), plus its page and stylesheet, into dist/console,
// where the API serves them at /console. Nothing is bundled and nothing is fetched at run time.
function buildConsole(out) {
  const ts = require('typescript');
  const source = path.join(root, 'console');
  fs.mkdirSync(out, { recursive: true });
  for (const file of listFiles(path.join(source, 'src'), '.ts')) {
    const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, verbatimModuleSyntax: true },
      fileName: file,
    });
    const target = path.join(out, path.relative(path.join(source, 'src'), file).replace(/\.ts$/, '.js'));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, outputText);
  }
  for (const name of ['index.html', 'console.css', 'views.css']) fs.copyFileSync(path.join(source, name), path.join(out, name));
}

function listFiles(dir, ext) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(full, ext));
    else if (entry.name.endsWith(ext)) out.push(full);
  }
  return out;
}
