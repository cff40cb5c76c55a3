import type { QuickJSContext, QuickJSHandle, VmFunctionImplementation } from 'quickjs-emscripten-core';
import { SandboxEngineError } from '../errors';

/** What the guest's host functions talk to while a run owns this VM. */
export interface VmHostSink {
  output(kind: number, text: string): void;
  /** Returns the bridge id; throwing rejects the guest call with that error. */
  request(method: string, argsJson: string): string;
  cancel(id: string): void;
  /** "Now" for a restartSafe cell's `Date` (recorded, or replayed from the record). */
  clock(): number;
}

/** The VM whose bound run the host functions talk to (created before it, during a restore). */
export interface SinkOwner {
  readonly boundSink: VmHostSink | undefined;
}

export const HOST_FUNCTION_NAMES = ['out', 'request', 'cancel'] as const;

/**
 * The prelude's host functions (`out`, `request`, `cancel`), talking to whichever run `owner()`'s VM
 * is bound to. Built for a new VM and again, in the same order, for each restore of its image.
 */
export function hostFunctions(
  ctx: QuickJSContext,
  owner: () => SinkOwner | undefined,
  seeded = false,
): VmFunctionImplementation<QuickJSHandle>[] {
  const functions: VmFunctionImplementation<QuickJSHandle>[] = [
    (kind, text) => {
      owner()?.boundSink?.output(ctx.getNumber(kind), ctx.getString(text));
    },
    (method, args) => {
      const sink = owner()?.boundSink;
      if (!sink) throw new SandboxEngineError('no run owns this sandbox');
      return ctx.newString(sink.request(ctx.getString(method), ctx.getString(args)));
    },
    (id) => {
      owner()?.boundSink?.cancel(ctx.getString(id));
    },
  ];
  if (seeded) functions.push(clockFunction(ctx, owner));
  return functions;
}

/** A restartSafe cell's `Date` "now", from the bound run (recorded, or replayed). */
export function clockFunction(ctx: QuickJSContext, owner: () => SinkOwner | undefined): VmFunctionImplementation<QuickJSHandle> {
  return () => {
    const sink = owner()?.boundSink;
    if (!sink) throw new SandboxEngineError('no run owns this sandbox');
    return ctx.newNumber(sink.clock());
  };
}
