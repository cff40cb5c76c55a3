import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { runBodyTask, type BodyTask } from './body-tasks';

// Only on Linux is a thread's niceness its own; elsewhere this would renice the whole API.
if (process.platform === 'linux') setPriority((workerData as { nice: number }).nice);

/** Entry of a body thread: runs each task it is sent and answers with its result, or why it failed. */
const port = parentPort;
port?.on('message', ({ id, task }: { id: number; task: BodyTask }) => {
  try {
    port.postMessage({ id, result: runBodyTask(task) });
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
