import { SandboxEngineError } from '../errors';
import { CellVm, type PreparedImage } from './cell-vm';
import { DEFAULT_MEMORY_BYTES, WasmLoader } from './wasm-loader';

const NO_HOST = { output: () => undefined, request: () => 'bridge:none:1', cancel: () => undefined, clock: () => Date.now() };

/**
 * Benchmark helper: one tiny cell (`return 1+1`) on a VM started from the prepared image or built
 * from scratch, run in the calling thread without the pool, released afterwards (its Memory
 * recycled as in a sandbox thread). Measures what a thread pays per cell for each start path.
 */
export class CellStartProbe {
  private constructor(
    private readonly loader: WasmLoader,
    private readonly image: PreparedImage,
  ) {}

  static async load(): Promise<CellStartProbe> {
    const loader = await WasmLoader.load('release');
    const base = await CellVm.create(loader, DEFAULT_MEMORY_BYTES);
    const image = base.captureImage();
    base.release();
    return new CellStartProbe(loader, image);
  }

  /** Size of the image in bytes (its stored 4 KiB pages). */
  get imageBytes(): number {
    return this.image.vm.bytes.byteLength;
  }

  async fromImage(): Promise<void> {
    this.runTiny(await CellVm.fromBootImage(this.loader, this.image, DEFAULT_MEMORY_BYTES));
  }

  async fromScratch(): Promise<void> {
    this.runTiny(await CellVm.create(this.loader, DEFAULT_MEMORY_BYTES));
  }

  private runTiny(vm: CellVm): void {
    vm.bind(NO_HOST, performance.now() + 5000);
    const started = vm.start('return 1+1');
    vm.pump(2000);
    const value = started.ok ? vm.readValue() : undefined;
    vm.release();
    if (!value?.ok || value.json !== '2') throw new SandboxEngineError(`tiny cell failed: ${JSON.stringify(value ?? started)}`);
  }
}
