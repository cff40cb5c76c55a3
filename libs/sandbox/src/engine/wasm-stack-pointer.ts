import type { QuickJSWASMModule } from 'quickjs-emscripten-core';

/** The emscripten glue under the library's module (private): its named exports are `_`-prefixed properties. */
interface ModuleGlue {
  module: Record<string, unknown>;
}

/**
 * Finds which export of a release instance reads the wasm stack pointer. emscripten's glue keeps
 * that reader (`emscripten_stack_get_current`) to itself under a minified export name that may
 * change with any build, so it is found by what it does, on a throwaway instance (`module` and its
 * raw `exports`; the search calls into it): of the exports the glue does not name, the one taking no
 * argument that answers the stack's top (`stackTop`) while no call runs, and less from inside a
 * call. Undefined unless exactly one does; the loader then never reuses an instance.
 */
export function findStackPointerReader(module: QuickJSWASMModule, exports: Record<string, unknown>, stackTop: number): string | undefined {
  const named = new Set(Object.values((module as unknown as ModuleGlue).module));
  const idleAtTop = Object.entries(exports).filter(
    (entry): entry is [string, () => unknown] =>
      typeof entry[1] === 'function' && entry[1].length === 0 && !named.has(entry[1]) && answers(entry[1] as () => unknown) === stackTop,
  );
  if (idleAtTop.length === 0) return undefined;
  const runtime = module.newRuntime();
  const context = runtime.newContext();
  let inCall: unknown[] = [];
  const probe = context.newFunction('probe', () => {
    inCall = idleAtTop.map(([, read]) => answers(read));
  });
  context.setProp(context.global, 'probe', probe);
  probe.dispose();
  const result = context.evalCode('probe()');
  if (result.error) result.error.dispose();
  else result.value.dispose();
  const found = idleAtTop.filter(([, read], index) => {
    const during = inCall[index];
    return typeof during === 'number' && during < stackTop && answers(read) === stackTop;
  });
  return found.length === 1 ? found[0][0] : undefined;
}

/** What an export answers when called without arguments; undefined when it throws. */
function answers(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return undefined;
  }
}
