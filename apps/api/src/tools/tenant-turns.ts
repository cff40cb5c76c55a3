/**
 * Runs each tenant's tasks one after another, different tenants' side by side. The API reads a
 * whole tool list (up to 16 MiB) only inside a turn, so Redis holds at most one such reply per
 * tenant for the API at a time: a tenant asking for the lists of a hundred sessions at once has
 * them read one by one, and Redis' reply buffers stay bounded by the tenant count, not by its asks.
 */
export class TenantTurns {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(tenant: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(tenant) ?? Promise.resolve();
    const turn = previous.then(task);
    const tail = turn.catch(() => undefined);
    this.tails.set(tenant, tail);
    void tail.then(() => {
      if (this.tails.get(tenant) === tail) this.tails.delete(tenant);
    });
    return turn;
  }
}
