/** The parts of a V8 sampling heap profile (`HeapProfiler.stopSampling`) the garbage bench reads. */
export interface SamplingHeapProfile {
  head: ProfileNode;
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

export interface Allocator {
  /** `function (file:line)`, the file relative to the repository's build or to node_modules. */
  frame: string;
  bytes: number;
}

export interface ProfileTop {
  /** Sampled bytes in all: V8's estimate of everything the thread allocated while sampling. */
  totalBytes: number;
  /** Functions by the bytes they allocated themselves. */
  bySelf: Allocator[];
  /**
   * Our functions (apps/, libs/) by the bytes allocated in them or in library code they called,
   * each byte counted once, for the innermost of our frames above it.
   */
  byOwnCaller: Allocator[];
}

const OURS = /\/dist\/(apps|libs)\//;

/** Where a frame is, short: `name (apps/api/src/x.js:12)`, `name (ioredis/built/y.js:3)`. */
function frameName(frame: ProfileNode['callFrame']): string {
  const file = frame.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/dist\//, '')
    .replace(/^.*\/node_modules\//, '');
  const where = file ? `${file}:${frame.lineNumber + 1}` : '(native)';
  return `${frame.functionName || '(anonymous)'} (${where})`;
}

/** The `limit` heaviest allocators of a profile, by self bytes and by our innermost caller. */
export function profileTop(profile: SamplingHeapProfile, limit: number): ProfileTop {
  const self = new Map<string, number>();
  const own = new Map<string, number>();
  let totalBytes = 0;
  const add = (map: Map<string, number>, key: string, bytes: number): void => {
    map.set(key, (map.get(key) ?? 0) + bytes);
  };
  const walk = (node: ProfileNode, ownCaller: string | undefined): void => {
    const name = frameName(node.callFrame);
    const caller = OURS.test(node.callFrame.url) ? name : ownCaller;
    if (node.selfSize > 0) {
      totalBytes += node.selfSize;
      add(self, name, node.selfSize);
      add(own, caller ?? '(no frame of ours)', node.selfSize);
    }
    for (const child of node.children) walk(child, caller);
  };
  walk(profile.head, undefined);
  const top = (map: Map<string, number>): Allocator[] =>
    [...map]
      .map(([frame, bytes]) => ({ frame, bytes }))
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, limit);
  return { totalBytes, bySelf: top(self), byOwnCaller: top(own) };
}
