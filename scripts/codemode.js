#!/usr/bin/env node
'use strict';
// The `codemode` bin (package.json): runs the built CLI from dist/, building first when dist/ is
// missing or older than a source of the CLI (libs/client, libs/contracts), as scripts/start.js
// does for the service. Edits elsewhere (apps, other libs) do not make every CLI call rebuild.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const entry = path.join(root, 'dist', 'libs', 'client', 'src', 'cli', 'main.js');

function ensureBuilt() {
  const marker = path.join(root, 'dist', '.built-at');
  const builtAt = fs.existsSync(marker) ? fs.statSync(marker).mtimeMs : 0;
  const newer = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).some((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return newer(full);
      return /\.(ts|lua)$/.test(e.name) && fs.statSync(full).mtimeMs > builtAt;
    });
  if (builtAt === 0 || !fs.existsSync(entry) || ['client', 'contracts'].some((lib) => newer(path.join(root, 'libs', lib)))) {
    // On stderr: stdout belongs to the command's output.
    process.stderr.write('codemode: building dist/ (sources changed since the last build)\n');
    execFileSync(process.execPath, [path.join(root, 'scripts', 'build.js')], { cwd: root, stdio: ['ignore', 2, 2] });
  }
}

ensureBuilt();
// main.js runs only as the main module; requiring it from here runs its entry explicitly.
require(entry).start();
