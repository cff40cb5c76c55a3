import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

/**
 * Loaded into an app with `NODE_OPTIONS=--require …/garbage-preload.js` by the garbage bench
 * (bench/garbage.ts), never by the apps themselves.
 *
 * It turns on `--trace-gc-nvp` (a V8 flag NODE_OPTIONS refuses): one line per collection on
 * stdout, from every isolate of the process, read by GcTrace.
 *
 * With GARBAGE_PROFILE_DIR set, the first SIGUSR2 also starts V8's sampling heap profiler on the
 * main thread, counting objects the collector has already freed too (so the profile is what was
 * allocated, not what is still alive); the second stops it and writes the profile to
 * `$GARBAGE_PROFILE_DIR/<pid>.heapprofile` (loadable in Chrome DevTools' Memory tab).
 */
if (isMainThread) {
  setFlagsFromString('--trace-gc-nvp');
  const dir = process.env.GARBAGE_PROFILE_DIR;
  if (dir) sampleOnSignal(dir);
}

function sampleOnSignal(dir: string): void {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.startSampling', {
        samplingInterval: 16_384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      return;
    }
    sampling = false;
    session.post('HeapProfiler.stopSampling', (error, result) => {
      const path = join(dir, `${process.pid}.heapprofile`);
      writeFileSync(path, error ? JSON.stringify({ error: String(error) }) : JSON.stringify(result.profile));
    });
  });
}
