import { spawn } from 'node:child_process';

/** The baseline for `shell/exec`: spawning `true` and waiting for it, in-process. */
export function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve());
  });
}
