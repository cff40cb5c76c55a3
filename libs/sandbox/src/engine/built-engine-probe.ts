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
