import { InFlightLimit } from '@codemode/fairness';

/**
 * Large bodies one tenant has in the API at once, from the byte that passes the default body cap
 * to the answer (an exec's or a wait's to its last byte: their answer waits for a cell). Twenty
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

/** Given the release of the place it was admitted to. */
type Waiter = (release: () => void) => void;

/**
 * SPEC §10 "Fate isolation": the large bodies a tenant has in the API are bounded, so one tenant
 * sending many at once waits for its own, its sockets unread (TCP holds the rest of its bytes back),
 * while other tenants' bodies and requests go on. The places are counted by an `InFlightLimit`;
 * bodies that find none wait here and are admitted in arrival order.
 */
export class LargeBodyGate {
  private readonly places: InFlightLimit;
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(perTenant = LARGE_BODIES_PER_TENANT) {
    this.places = new InFlightLimit({ perKey: perTenant });
  }

  enter(tenant: string): GatePlace {
    let release: (() => void) | null = null;
    let left = false;
    let admit: () => void = () => undefined;
    const admitted = new Promise<void>((resolve) => (admit = resolve));
    const waiter: Waiter = (granted) => {
      release = granted;
      admit();
    };
    const granted = this.places.acquire(tenant);
    if (granted) waiter(granted);
    else this.queueOf(tenant).push(waiter);
    return {
      admitted,
      leave: () => {
        if (left) return;
        left = true;
        if (release === null) this.drop(tenant, waiter);
        else {
          release();
          this.admitNext(tenant);
        }
      },
    };
  }

  /** Large bodies `tenant` has in the API now. */
  heldBy(tenant: string): number {
    return this.places.held(tenant);
  }

  private admitNext(tenant: string): void {
    const queue = this.waiting.get(tenant);
    if (!queue) return;
    const granted = this.places.acquire(tenant);
    if (!granted) return;
    const next = queue.shift() as Waiter;
    if (queue.length === 0) this.waiting.delete(tenant);
    next(granted);
  }

  private drop(tenant: string, waiter: Waiter): void {
    const queue = this.waiting.get(tenant);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.waiting.delete(tenant);
  }

  private queueOf(tenant: string): Waiter[] {
    let queue = this.waiting.get(tenant);
    if (!queue) {
      queue = [];
      this.waiting.set(tenant, queue);
    }
    return queue;
  }
}
