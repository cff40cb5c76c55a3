import { TenantTurns } from './tenant-turns';

describe('TenantTurns', () => {
  it("runs a tenant's tasks one after another, another tenant's beside them, a failure not stopping the next", async () => {
    const turns = new TenantTurns();
    const log: string[] = [];
    const task =
      (name: string, ms: number, fail = false) =>
      async (): Promise<string> => {
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const first = turns.run('bob', task('bob-1', 30, true));
    const second = turns.run('bob', task('bob-2', 10));
    const alice = turns.run('alice', task('alice', 5));
    await expect(first).rejects.toThrow('bob-1');
    expect(await second).toBe('bob-2');
    expect(await alice).toBe('alice');
    expect(log).toEqual(['start bob-1', 'start alice', 'end alice', 'end bob-1', 'start bob-2', 'end bob-2']);
  });
});
