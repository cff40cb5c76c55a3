import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { threadScriptPath } from '../thread/thread-script';

/** The built engine's folder (dist/…/engine), beside the thread script the pool runs. */
const ENGINE = dirname(threadScriptPath()).replace(/thread$/, 'engine');

/**
 * Runs `probe` (the body of an async function that writes its findings as JSON to stdout; `ENGINE`
 * names the built engine's folder) in a child Node process and answers what it wrote. Engine specs
 * use it because the emscripten module is ESM loaded by dynamic import, which jest's CommonJS
 * sandbox refuses; the threads load the same built files (`npm run build`).
 */
export function runBuiltEngineProbe(probe: string, timeoutMs: number): unknown {
  const script = [
    `const ENGINE = ${JSON.stringify(ENGINE)};`,
    '(async () => {',
    probe,
    '})().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });',
  ].join('\n');
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: timeoutMs })) as unknown;
}

/**
 * A cell that leaves `secret` wherever a later cell on the same Memory could look for it: in a big
 * string, in a kept and a freed ArrayBuffer, and deep on the wasm stack, all within the image's
 * initial pages (a Memory that grew is never recycled). For the specs that prove a recycled
 * Memory holds nothing of an earlier tenant's cell.
 */
export function secretLeavingCell(secret: string): string {
  return [
    `globalThis.big = ${JSON.stringify(secret)}.repeat(4000);`,
    'const stamp = (buffer) => {',
    '  for (let i = 0; i < 4096; i += 1) buffer[i] = big.charCodeAt(i % big.length);',
    '  for (let n = 4096; n < buffer.length; n *= 2) buffer.copyWithin(n, 0, n);',
    '  return buffer;',
    '};',
    'globalThis.keep = stamp(new Uint8Array(128 << 10));',
    'let top = stamp(new Uint8Array(256 << 10));',
    'top = null;',
    'const deep = (n) => (n === 0 ? big.slice(0, 64) : deep(n - 1) + "");',
    'return deep(2000).length;',
  ].join('\n');
}
