import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync';

/** The floor: a fresh QuickJS runtime + context + eval + dispose, in-process, no isolation extras. */
export class QuickjsBaseline {
  private constructor(private readonly module: QuickJSWASMModule) {}

  static async start(): Promise<QuickjsBaseline> {
    return new QuickjsBaseline(await newQuickJSWASMModuleFromVariant(RELEASE_SYNC));
  }

  async evalFresh(): Promise<unknown> {
    const runtime = this.module.newRuntime();
    const context = runtime.newContext();
    const result = context.evalCode('1+1');
    const value: unknown = context.dump(context.unwrapResult(result));
    context.dispose();
    runtime.dispose();
    return value;
  }
}
