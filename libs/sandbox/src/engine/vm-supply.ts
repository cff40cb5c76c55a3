import { CellVm, type PreparedImage } from './cell-vm';
import { PreparedCatalog } from './prepared-catalog';
import { DEFAULT_MEMORY_BYTES, memoryMaxBytes, MIN_MEMORY_BYTES, type WasmLoader } from './wasm-loader';

/** What a thread hears from its supply. */
export interface VmSupplyEvents {
  /** A spare VM is ready: a run with the default cap started now takes it instead of building one. */
  warm(): void;
  /** Something failed (`msg` says what); the supply goes on: from scratch, or without a spare. */
  failed(msg: string, error: unknown): void;
}

/**
 * Where a thread's VMs come from. Once, at boot, a VM is built from scratch (guest sources
 * evaluated, no run's data) and captured as the boot image; every later VM is an instance (a
 * recycled one when the loader has one, see `WasmLoader`) whose Memory is filled from that image (from scratch only if the capture failed).
 *
 * One **spare** VM with the default cap (`DEFAULT_MEMORY_BYTES`) is prepared ahead, while the thread
 * has nothing else to do: after a run's leg ends (its answer has left) and, when a start took the
 * spare, once that start's turn is over. A run with the default cap takes the spare, so its start
 * costs only the cell's own work; the instance, the image copy and the zero-fill of the recycled
 * Memory it sits on were paid earlier, off the start's latency but on the same thread's CPU. No
 * spare is ready when starts on one thread come faster than it turns idle between them (a second
 * cell starting in the same turn, messages queued back to back) or when a run asks for another cap:
 * such a start builds its VM on the spot, as `CellVm.fromBootImage` does.
 *
 * A spare is an instance (recycled or new, see `WasmLoader`) whose Memory was zero-filled since its
 * last run and filled from the image; no cell has run in it since, and the run that takes it is its
 * only user. At most one per thread (~6 MiB of
 * Memory; like the live runs' VMs it is not counted with the parked VMs' budget).
 */
export class VmSupply {
  private spare: Promise<CellVm> | undefined;
  private refill: NodeJS.Immediate | undefined;

  private constructor(
    private readonly loader: WasmLoader,
    /** Every VM starts from it; undefined only when capturing it failed (then: from scratch). */
    private readonly image: PreparedImage | undefined,
    private readonly events: VmSupplyEvents,
    /** The catalog whose handles every VM of this supply holds prepared, if any. */
    readonly prepared: PreparedCatalog | undefined,
  ) {}

  /**
   * Builds and captures the boot image (the VM it came from never runs a cell); no spare yet. With
   * `preparedCatalogJson`, the image holds that catalog's tool handles, prepared (installPrelude).
   */
  static async open(loader: WasmLoader, events: VmSupplyEvents, preparedCatalogJson?: string): Promise<VmSupply> {
    const prepared = preparedCatalogJson === undefined ? undefined : new PreparedCatalog(preparedCatalogJson);
    const base = await CellVm.create(loader, DEFAULT_MEMORY_BYTES, prepared);
    let image: PreparedImage | undefined;
    try {
      image = base.captureImage();
    } catch (error) {
      events.failed('sandbox image capture failed; VMs are built from scratch', error);
    } finally {
      base.release();
    }
    return new VmSupply(loader, image, events, prepared);
  }

  /** Size of the boot image's stored pages in bytes (0 without one). */
  get imageBytes(): number {
    return this.image?.vm.bytes.byteLength ?? 0;
  }

  /** A spare is prepared (or being prepared): a default-cap start now does not build its own. */
  get hasSpare(): boolean {
    return this.spare !== undefined;
  }

  /** A VM for a new run: the spare when the run's cap is the default one, else one built now. */
  take(memoryLimitBytes: number): Promise<CellVm> {
    const spare = this.spare;
    if (!spare || memoryLimitBytes < MIN_MEMORY_BYTES || memoryMaxBytes(memoryLimitBytes) !== memoryMaxBytes(DEFAULT_MEMORY_BYTES)) {
      return this.build(memoryLimitBytes);
    }
    this.spare = undefined;
    // The next one once this start's turn is over (the run is then waiting for the host, or done).
    this.refill ??= setImmediate(() => {
      this.refill = undefined;
      void this.prepare();
    });
    return spare;
  }

  /** A VM built now, without the spare (also what `take` does when the spare does not fit). */
  build(memoryLimitBytes: number): Promise<CellVm> {
    return this.image
      ? CellVm.fromBootImage(this.loader, this.image, memoryLimitBytes)
      : CellVm.create(this.loader, memoryLimitBytes, this.prepared);
  }

  /** Prepares the spare unless there is one; resolves true once it is ready, false when it failed (reported). */
  prepare(): Promise<boolean> {
    if (this.spare)
      return this.spare.then(
        () => true,
        () => false,
      );
    const created = this.build(DEFAULT_MEMORY_BYTES);
    this.spare = created;
    return created.then(
      () => {
        this.events.warm();
        return true;
      },
      (error: unknown) => {
        if (this.spare === created) this.spare = undefined;
        this.events.failed('sandbox instance creation failed', error);
        return false;
      },
    );
  }
}
