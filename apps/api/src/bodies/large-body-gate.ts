/**
 * Bodies past this size are read under the gate: only the large-body routes take more than 1 MiB
 * (SPEC §10 "API"), so an ordinary request never waits here.
 */
export const GATED_BODY_BYTES = 1024 * 1024;
/**
 * Large bodies one tenant has in the API at once, from the byte that passes `GATED_BODY_BYTES` to
 * the answer (an exec's or a wait's to its last byte: their answer waits for a cell). Twenty
 * concurrent ~11 MB registrations of one tenant had the API's event loop moving 220 MB at once and
 * another tenant's small read waiting up to 0.4–0.97 s behind it; two at a time, ~0.3 s, and the
 * twenty took no longer (docs/benchmarks.md, "Fate isolation").
 */
export const LARGE_BODIES_PER_TENANT = 2;

/** A place in the gate: `admitted` resolves once the body may be read on; `leave` gives the place back or stops waiting. */
export interface GatePlace {
  readonly admitted: Promise<void>;
  leave(this: void): void;
}

/**
 * SPEC §10 "Fate isolation": the large bodies a tenant has in the API are bounded, so one tenant
 * sending many at once waits for its own, its sockets unread (TCP holds the rest of its bytes back),
 * while other tenants' bodies and requests go on. Waiting bodies are admitted in arrival order.
 */
export class LargeBodyGate {
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly perTenant = LARGE_BODIES_PER_TENANT) {}

  enter(tenant: string): GatePlace {
    let state: 'waiting' | 'held' | 'left' = 'waiting';
    let admit: () => void = () => undefined;
    const admitted = new Promise<void>((resolve) => {
      admit = () => {
        state = 'held';
        resolve();
      };
    });
    if ((this.held.get(tenant) ?? 0) < this.perTenant) this.take(tenant, admit);
    else this.queueOf(tenant).push(admit);
    return {
      admitted,
      leave: () => {
        if (state === 'left') return;
        const was = state;
        state = 'left';
        if (was === 'held') this.release(tenant);
        else this.drop(tenant, admit);
      },
    };
  }

  /** Large bodies `tenant` has in the API now. */
  heldBy(tenant: string): number {
    return this.held.get(tenant) ?? 0;
  }

  private take(tenant: string, admit: () => void): void {
    this.held.set(tenant, (this.held.get(tenant) ?? 0) + 1);
    admit();
  }

  private release(tenant: string): void {
    const left = (this.held.get(tenant) ?? 1) - 1;
    if (left === 0) this.held.delete(tenant);
    else this.held.set(tenant, left);
    const next = this.waiting.get(tenant)?.shift();
    if (this.waiting.get(tenant)?.length === 0) this.waiting.delete(tenant);
    if (next) this.take(tenant, next);
  }

  private drop(tenant: string, admit: () => void): void {
    const queue = this.waiting.get(tenant);
    if (!queue) return;
    const at = queue.indexOf(admit);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.waiting.delete(tenant);
  }

  private queueOf(tenant: string): (() => void)[] {
    let queue = this.waiting.get(tenant);
    if (!queue) {
      queue = [];
      this.waiting.set(tenant, queue);
    }
    return queue;
  }
}
