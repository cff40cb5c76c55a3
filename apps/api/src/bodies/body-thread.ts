import { parentPort } from 'node:worker_threads';
import { runBodyTask, type BodyTask } from './body-tasks';

/** Entry of a body thread: runs each task it is sent and answers with its result, or why it failed. */
const port = parentPort;
port?.on('message', ({ id, task }: { id: number; task: BodyTask }) => {
  try {
    port.postMessage({ id, result: runBodyTask(task) });
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
