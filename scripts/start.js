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
/** Children in process groups of their own, so a terminal's Ctrl-C reaches them only through us. */
const OWN_GROUP = process.platform !== 'win32';
/** One Ctrl-C can reach us twice (the terminal's signal to the group, npm's forwarded copy). */
const SAME_SIGNAL_MS = 1000;

function say(msg, fields = {}) {
  process.stdout.write(
    `${JSON.stringify({ level: 'info', time: new Date().toISOString(), service: 'codemode-launcher', msg, ...fields })}\n`,
  );
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
  // A Redis Cluster (SPEC §13) is the operator's: the apps connect to its seeds and report
  // not-ready until it answers; nothing is started for it.
  if (process.env.REDIS_CLUSTER_NODES && process.env.REDIS_CLUSTER_NODES.trim() !== '') return;
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
  const redis = spawn(
    'redis-server',
    ['--port', String(address.port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      detached: OWN_GROUP, // Ctrl-C must not stop it before the apps have drained (see main)
    },
  );
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
  const apps = [];
  let stoppedAt = 0;
  const running = () => apps.filter((app) => app.exitCode === null && app.signalCode === null);
  // Each app gets exactly one signal from here and drains (running cells finish); a private Redis
  // goes last. A terminal's Ctrl-C signals its whole foreground process group: were the apps in
  // it, they would get it from the terminal and again from here, and an app exits at once on a
  // second signal. So they run in process groups of their own and we forward the signal once; a
  // repeat (another Ctrl-C, a second SIGTERM) is passed on, and the apps then exit at once.
  const stop = (signal) => {
    if (stoppedAt !== 0) {
      if (Date.now() - stoppedAt >= SAME_SIGNAL_MS) for (const app of running()) app.kill(signal);
      return;
    }
    stoppedAt = Date.now();
    const left = running();
    for (const app of left) app.kill(signal);
    Promise.all(left.map((app) => new Promise((r) => app.once('exit', r)))).then(() => {
      for (const server of redis) server.kill('SIGTERM');
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Closing the terminal: the apps, in their own groups, do not get its SIGHUP; drain them.
  process.on('SIGHUP', () => stop('SIGTERM'));
  await ensureRedis(redis);
  if (stoppedAt !== 0) {
    for (const server of redis) server.kill('SIGTERM');
    return;
  }
  for (const name of ['worker', 'api']) {
    const child = spawn(process.execPath, [path.join(root, entries[name])], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: process.env,
      detached: OWN_GROUP,
    });
    child.on('exit', (code, signal) => {
      if (stoppedAt !== 0) {
        if (code !== 0) process.exitCode = code || 1;
        return;
      }
      say(`${name} exited; stopping the others`, { code, signal });
      process.exitCode = code || 1;
      stop('SIGTERM');
    });
    apps.push(child);
  }
}

main().catch((error) => fail(String(error && error.stack ? error.stack : error)));
