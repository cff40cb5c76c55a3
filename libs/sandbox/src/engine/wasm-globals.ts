/**
 * The few WebAssembly globals the engine uses. The repository compiles with `lib: ES2023` and
 * Node's types, neither of which declares the WebAssembly namespace.
 */
declare global {
  // A global namespace can only be augmented with namespace syntax.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace WebAssembly {
    class Module {}
    class Instance {
      constructor(module: Module, imports: object);
      readonly exports: object;
    }
    class Memory {
      constructor(descriptor: { initial: number; maximum?: number });
      readonly buffer: ArrayBuffer;
    }
    function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>;
  }
}

export {};
