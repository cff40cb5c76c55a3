import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { WorkspaceWalkerEndedError } from '../errors';

/** What a workspace holds: allocated bytes and entries (files, folders, links) below its root. */
export interface WorkspaceFigures {
  readonly bytes: number;
  readonly entries: number;
  /**
   * Part of the tree could not be read because its path is longer than the kernel takes
   * (ENAMETOOLONG): what lies below is not counted, so the caller treats the workspace as over.
   */
  readonly unmeasurable: boolean;
}

/** A walk stops as soon as it passes either bound: the figure is then only known to be over. */
export interface WalkBounds {
  readonly bytes: number;
  readonly entries: number;
}

/**
 * Thread body, plain JavaScript so it runs as written under ts-jest and in the build alike. Each
 * request `{id, dir, pids, bytes, entries}` is answered `{id, bytes, entries, unmeasurable}`. The
 * walk is synchronous on purpose: it runs on its own thread, so it keeps neither the worker's event
 * loop nor libuv's file threads (which the file tools use) busy. Symbolic links are counted, never
 * followed; a hard link counts at each of its names (never less than the truth). A file removed
 * while a command keeps it open still takes disk, out of the walk's sight: the open files of the
 * commands' processes (`pids` and their descendants) are checked for such files too.
 */
const WALKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { readdirSync, readFileSync, lstatSync, statSync } = require('node:fs');

function walk(dir, maxBytes, maxEntries) {
  let bytes = 0;
  let entries = 0;
  let unmeasurable = false;
  const pending = [dir];
  walk: while (pending.length > 0) {
    const current = pending.pop();
    let names;
    try {
      names = readdirSync(current);
    } catch (error) {
      if (error && error.code === 'ENAMETOOLONG') unmeasurable = true;
      continue;
    }
    for (const name of names) {
      entries += 1;
      const full = current + '/' + name;
      let info;
      try {
        info = lstatSync(full);
      } catch (error) {
        if (error && error.code === 'ENAMETOOLONG') unmeasurable = true;
        continue;
      }
      bytes += info.blocks * 512;
      if (info.isDirectory()) pending.push(full);
      if (bytes > maxBytes || entries > maxEntries || unmeasurable) break walk;
    }
  }
  return { bytes, entries, unmeasurable };
}

/** The given pids and every descendant, from each process's parent in /proc/<pid>/stat. */
function processTree(roots) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    let raw;
    try {
      raw = readFileSync('/proc/' + name + '/stat', 'utf8');
    } catch {
      continue;
    }
    const ppid = Number(raw.slice(raw.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(name));
  }
  const pids = roots.slice();
  for (let i = 0; i < pids.length; i += 1) for (const child of children.get(pids[i]) || []) pids.push(child);
  return pids;
}

/** Blocks of files on the workspace's filesystem that a command holds open after removing them. */
function heldRemovedBytes(roots, dev) {
  let bytes = 0;
  const counted = new Set();
  for (const pid of processTree(roots)) {
    let fds;
    try {
      fds = readdirSync('/proc/' + pid + '/fd');
    } catch {
      continue;
    }
    for (const fd of fds) {
      let info;
      try {
        info = statSync('/proc/' + pid + '/fd/' + fd);
      } catch {
        continue;
      }
      if (info.nlink !== 0 || info.dev !== dev || !info.isFile() || counted.has(info.ino)) continue;
      counted.add(info.ino);
      bytes += info.blocks * 512;
    }
  }
  return bytes;
}

parentPort.on('message', ({ id, dir, pids, bytes: maxBytes, entries: maxEntries }) => {
  let held = 0;
  try {
    if (pids.length > 0) held = heldRemovedBytes(pids, lstatSync(dir).dev);
  } catch {
    held = 0;
  }
  const figures = walk(dir, maxBytes - held, maxEntries);
  parentPort.postMessage({ id, bytes: figures.bytes + held, entries: figures.entries, unmeasurable: figures.unmeasurable });
});
`;

interface Reply extends WorkspaceFigures {
  readonly id: number;
}

/**
 * Measures workspaces on one thread of its own, one walk at a time in the order asked (so each
 * watched workspace gets its turn). Started on first use; `unref`'d so it never holds the process
 * open; a thread that dies is started again by the next request.
 */
export class WorkspaceWalker {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (figures: WorkspaceFigures) => void; reject: (error: Error) => void }>();

  /** `pids`: the running commands of the workspace, whose removed-but-open files count too. */
  measure(dir: string, bounds: WalkBounds, pids: readonly number[] = []): Promise<WorkspaceFigures> {
    const worker = this.thread();
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, dir, pids, bytes: bounds.bytes, entries: bounds.entries });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WALKER_SOURCE, { eval: true });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiter = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      waiter?.resolve({ bytes: reply.bytes, entries: reply.entries, unmeasurable: reply.unmeasurable });
    });
    worker.on('error', () => undefined);
    void once(worker, 'exit').then(() => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(new WorkspaceWalkerEndedError());
      this.waiting.clear();
    });
    this.worker = worker;
    return worker;
  }
}
