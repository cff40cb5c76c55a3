#!/usr/bin/env node
'use strict';
// Starts the service. `node scripts/start.js` (npm start): API and one worker for development,
// with a private redis-server under ./.data/ when nothing answers at REDIS_URL.
// `node scripts/start.js api|worker` (npm run start:api / start:worker): one process, as in production.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const role = process.argv[2];
const entries = { api: 'dist/apps/api/src/main.js', worker: 'dist/apps/worker/src/main.js' };

function say(msg, fields = {}) {
  process.stdout.write(`${JSON.stringify({ level: 'info', time: new Date().toISOString(), service: 'codemode-launcher', msg, ...fields })}\n`);
}

function fail(msg) {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', service: 'codemode-launcher', msg })}\n`);
  process.exit(1);
}

/** Rebuilds dist/ when it is missing or older than a source file, so a fresh clone or an edit just runs. */
function ensureBuilt() {
  const marker = path.join(root, 'dist', '.built-at');
  const builtAt = fs.existsSync(marker) ? fs.statSync(marker).mtimeMs : 0;
  const newer = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).some((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return newer(full);
      return /\.(ts|lua)$/.test(e.name) && fs.statSync(full).mtimeMs > builtAt;
    });
  if (builtAt === 0 || newer(path.join(root, 'apps')) || newer(path.join(root, 'libs'))) {
    say('building dist/ (sources changed since the last build)');
    execFileSync(process.execPath, [path.join(root, 'scripts', 'build.js')], { cwd: root, stdio: 'inherit' });
  }
}

function redisAddress() {
  const url = new URL(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
  return { host: url.hostname || '127.0.0.1', port: Number(url.port || 6379), url };
}

function pingRedis({ host, port }) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    // A server with a password answers -NOAUTH: it is there, and the apps will authenticate.
    socket.on('data', (data) => done(/^(\+PONG|-NOAUTH)/.test(data.toString())));
  });
}

function onPath(binary) {
  return (process.env.PATH || '').split(path.delimiter).some((dir) => fs.existsSync(path.join(dir, binary)));
}

async function ensureRedis(started) {
  const address = redisAddress();
  if (await pingRedis(address)) return;
  const loopback = ['127.0.0.1', 'localhost', '::1'].includes(address.host);
  if (!loopback || !onPath('redis-server')) {
    fail(
      `Redis does not answer at ${address.url.href}. Start one (e.g. apt-get install -y redis-server && redis-server), ` +
        'or point REDIS_URL at a reachable Redis.',
    );
  }
  const dir = path.join(root, '.data', 'redis');
  fs.mkdirSync(dir, { recursive: true });
  say('no Redis answered; starting a private redis-server under ./.data/redis', { port: address.port });
  const redis = spawn('redis-server', ['--port', String(address.port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  started.push(redis);
  for (let i = 0; i < 50; i += 1) {
    if (await pingRedis(address)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  fail('the private redis-server did not start; see its output above.');
}

async function main() {
  ensureBuilt();
  if (role === 'api' || role === 'worker') {
    require(path.join(root, entries[role]));
    return;
  }
  if (role !== undefined) fail(`unknown role "${role}"; use api, worker, or nothing for both.`);
  const redis = [];
  await ensureRedis(redis);
  const apps = [];
  let stopping = false;
  // The apps drain first (running cells finish); a private Redis goes last.
  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    for (const app of apps) if (app.exitCode === null) app.kill(signal);
    Promise.all(apps.map((app) => (app.exitCode === null ? new Promise((r) => app.on('exit', r)) : null))).then(() => {
      for (const server of redis) server.kill('SIGTERM');
    });
  };
  for (const name of ['worker', 'api']) {
    const child = spawn(process.execPath, [path.join(root, entries[name])], { stdio: 'inherit', env: process.env });
    child.on('exit', (code, signal) => {
      if (stopping) return;
      say(`${name} exited; stopping the others`, { code, signal });
      process.exitCode = code || 1;
      stop('SIGTERM');
    });
    apps.push(child);
  }
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error) => fail(String(error && error.stack ? error.stack : error)));
