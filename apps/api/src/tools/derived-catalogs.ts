/** What a tenant's cached derivations may hold at most: a view of a 16 MiB list fits, several do not. */
export const TENANT_CACHE_BYTES = 48 * 1024 * 1024;
/** What the cache holds at most across tenants. */
export const TOTAL_CACHE_BYTES = 192 * 1024 * 1024;

interface Entry<V> {
  value: V;
  bytes: number;
}

/**
 * What is derived from a session's tool list (its exec description, its catalog view), kept by
 * what it was derived from (SPEC §10 "Fate isolation"): a key that names the list's version and
 * the rest of the inputs, so a new registration is a new key and is seen at once. Concurrent asks
 * for a key not yet derived share one derivation, so a hundred `tools/list` read a list once.
 *
 * Memory is bounded per tenant (its least recently used entries go first) and in all (the tenant
 * holding the most bytes loses its least recently used entry first), so a tenant filling the cache
 * evicts its own derivations, not another's. A value over a tenant's bound is not kept.
 */
export class DerivedCatalogs<V> {
  /** Per tenant, its entries in order of use (least recent first). */
  private readonly tenants = new Map<string, Map<string, Entry<V>>>();
  private readonly tenantBytes = new Map<string, number>();
  private readonly pending = new Map<string, Promise<V>>();
  private totalBytes = 0;

  constructor(
    private readonly sizeOf: (value: V) => number,
    private readonly maxTenantBytes = TENANT_CACHE_BYTES,
    private readonly maxTotalBytes = TOTAL_CACHE_BYTES,
  ) {}

  /** The value kept under `key`, else `derive`'s (shared with every ask for `key` meanwhile). */
  get(tenant: string, key: string, derive: () => Promise<V>): Promise<V> {
    const entries = this.tenants.get(tenant);
    const entry = entries?.get(key);
    if (entries && entry) {
      entries.delete(key);
      entries.set(key, entry);
      return Promise.resolve(entry.value);
    }
    const flight = `${tenant}\n${key}`;
    const pending = this.pending.get(flight);
    if (pending) return pending;
    const derived = derive().then(
      (value) => {
        this.pending.delete(flight);
        this.keep(tenant, key, value);
        return value;
      },
      (error: unknown) => {
        this.pending.delete(flight);
        throw error;
      },
    );
    this.pending.set(flight, derived);
    return derived;
  }

  /** Bytes the cache holds now (all tenants, or one). */
  held(tenant?: string): number {
    return tenant === undefined ? this.totalBytes : (this.tenantBytes.get(tenant) ?? 0);
  }

  private keep(tenant: string, key: string, value: V): void {
    const bytes = this.sizeOf(value);
    if (bytes > this.maxTenantBytes) return;
    this.drop(tenant, key);
    while (this.held(tenant) + bytes > this.maxTenantBytes) this.dropOldest(tenant);
    let entries = this.tenants.get(tenant);
    if (!entries) {
      entries = new Map();
      this.tenants.set(tenant, entries);
    }
    entries.set(key, { value, bytes });
    this.tenantBytes.set(tenant, this.held(tenant) + bytes);
    this.totalBytes += bytes;
    while (this.totalBytes > this.maxTotalBytes) this.dropOldest(this.largestTenant());
  }

  private dropOldest(tenant: string): void {
    const oldest = this.tenants.get(tenant)?.keys().next();
    if (oldest && !oldest.done) this.drop(tenant, oldest.value);
  }

  private drop(tenant: string, key: string): void {
    const entries = this.tenants.get(tenant);
    const entry = entries?.get(key);
    if (!entries || !entry) return;
    entries.delete(key);
    this.totalBytes -= entry.bytes;
    const left = this.held(tenant) - entry.bytes;
    if (entries.size > 0) this.tenantBytes.set(tenant, left);
    else {
      this.tenants.delete(tenant);
      this.tenantBytes.delete(tenant);
    }
  }

  private largestTenant(): string {
    let largest = '';
    let most = -1;
    for (const [tenant, bytes] of this.tenantBytes) {
      if (bytes > most) [largest, most] = [tenant, bytes];
    }
    return largest;
  }
}
