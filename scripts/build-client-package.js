#!/usr/bin/env node
'use strict';
// Builds libs/client as the installable @codemode/client package (SPEC §18) and packs it into
// <dir>, printing the tarball's path: the client, its CLI and the contracts it uses compiled by tsc
// to CommonJS with .d.ts (the workspace aliases rewritten to relative paths by tsc-alias, so nothing
// of the monorepo is needed at run time), an ESM entry that re-exports the CommonJS build, the
// manifest and the README. The package folder itself is built in the system's temp folder and
// removed: a second package.json named @codemode/client inside the repository would collide with
// libs/client's in jest's module map.
//   node scripts/build-client-package.js <dir>
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const lib = path.join(root, 'libs', 'client');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

function main(argv) {
  if (argv.length !== 1) {
    process.stderr.write('usage: node scripts/build-client-package.js <dir>\n');
    process.exit(2);
  }
  const packDir = path.resolve(argv[0]);
  const manifest = checkedManifest();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-client-package-'));
  try {
    const dist = path.join(out, 'dist');
    const tsconfig = path.join(lib, 'tsconfig.package.json');
    execFileSync(bin('tsc'), ['-p', tsconfig, '--outDir', dist], { cwd: root, stdio: 'inherit' });
    execFileSync(bin('tsc-alias'), ['-p', tsconfig, '--outDir', dist], { cwd: root, stdio: 'inherit' });
    writeEsmEntry(dist);
    fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    fs.copyFileSync(path.join(lib, 'README.md'), path.join(out, 'README.md'));
    fs.mkdirSync(packDir, { recursive: true });
    const packed = JSON.parse(
      execFileSync('npm', ['pack', out, '--json', '--ignore-scripts', '--pack-destination', packDir], { encoding: 'utf8' }),
    );
    process.stdout.write(`${path.join(packDir, packed[0].filename)}\n`);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/**
 * libs/client/package.json, checked against the root's: the same version (the CLI's --version and
 * the MCP bridge report it) and the same dependency versions the repository is tested with.
 */
function checkedManifest() {
  const manifest = JSON.parse(fs.readFileSync(path.join(lib, 'package.json'), 'utf8'));
  const rootManifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const tested = { ...rootManifest.dependencies, ...rootManifest.devDependencies };
  const problems = [];
  if (manifest.version !== rootManifest.version) problems.push(`version ${manifest.version} is not the root's ${rootManifest.version}`);
  for (const [name, version] of Object.entries(manifest.dependencies ?? {})) {
    if (tested[name] !== version) problems.push(`dependency ${name} ${version} is not the root's ${tested[name]}`);
  }
  for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
    if (range !== `^${tested[name]}`) problems.push(`peer ${name} ${range} is not ^ the root's ${tested[name]}`);
  }
  if (problems.length > 0) throw new Error(`libs/client/package.json: ${problems.join('; ')}`);
  return manifest;
}

/**
 * The ESM entry re-exports the CommonJS build by name rather than compiling a second copy, so an
 * application that loads the client both ways has one CodeModeApiError class (instanceof holds).
 */
function writeEsmEntry(dist) {
  const entry = path.join(dist, 'client', 'src', 'index.js');
  const names = Object.keys(require(entry)).filter((name) => name !== '__esModule');
  fs.writeFileSync(
    path.join(dist, 'index.mjs'),
    `import client from './client/src/index.js';\n\nexport const { ${names.join(', ')} } = client;\n`,
  );
  fs.writeFileSync(path.join(dist, 'index.d.mts'), `export * from './client/src/index.js';\n`);
}

main(process.argv.slice(2));
