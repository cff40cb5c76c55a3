import { SandboxEngineError } from '../errors';
import { CellVm } from './cell-vm';
import { VmSupply } from './vm-supply';
import { DEFAULT_MEMORY_BYTES, WasmLoader } from './wasm-loader';

const NO_HOST = { output: () => undefined, request: () => 'bridge:none:1', cancel: () => undefined, clock: () => Date.now() };

/**
 * Benchmark helper: one tiny cell (`return 1+1`) on a VM taken the way a sandbox thread takes it
 * (its `VmSupply`: the spare prepared ahead, or one built on the spot from the boot image) or
 * built from scratch, run in the calling thread without the pool, released afterwards (its Memory
 * recycled as in a sandbox thread). Measures what a thread pays per cell for each start path.
 */
export class CellStartProbe {
  private constructor(
    private readonly loader: WasmLoader,
    private readonly supply: VmSupply,
  ) {}

  /** With `preparedCatalogJson`, its handles are prepared in the boot image, as the worker's threads prepare the core tools'. */
  static async load(preparedCatalogJson?: string): Promise<CellStartProbe> {
    const loader = await WasmLoader.load('release');
    const failed = (msg: string, error: unknown): never => {
      throw new SandboxEngineError(`${msg}: ${String(error)}`);
    };
    const supply = await VmSupply.open(loader, { warm: () => undefined, failed }, preparedCatalogJson);
    return new CellStartProbe(loader, supply);
  }

  /** Size of the boot image in bytes (its stored 4 KiB pages). */
  get imageBytes(): number {
    return this.supply.imageBytes;
  }

  /**
   * The cell on the spare, as a thread's start takes it; `prepareSpare` must have run since the
   * last one. With `catalogJson` (a GuestCatalog), its tool globals are defined first, as for a run.
   */
  async fromSpare(catalogJson?: string): Promise<void> {
    if (!this.supply.hasSpare) throw new SandboxEngineError('no spare VM is prepared');
    this.runTiny(await this.supply.take(DEFAULT_MEMORY_BYTES), catalogJson);
  }

  /** What a thread does once a cell's answer has left: prepare the next spare. */
  async prepareSpare(): Promise<void> {
    if (!(await this.supply.prepare())) throw new SandboxEngineError('spare VM preparation failed');
  }

  /** The cell on a VM built on the spot from the boot image: a start that found no spare ready. */
  async fromImage(): Promise<void> {
    this.runTiny(await this.supply.build(DEFAULT_MEMORY_BYTES));
  }

  async fromScratch(): Promise<void> {
    this.runTiny(await CellVm.create(this.loader, DEFAULT_MEMORY_BYTES, this.supply.prepared));
  }

  private runTiny(vm: CellVm, catalogJson?: string): void {
    vm.bind(NO_HOST, performance.now() + 5000);
    const started = vm.start('return 1+1', catalogJson);
    vm.pump(2000);
    const value = started.ok ? vm.readValue() : undefined;
    vm.release();
    if (!value?.ok || value.json !== '2') throw new SandboxEngineError(`tiny cell failed: ${JSON.stringify(value ?? started)}`);
  }
}
