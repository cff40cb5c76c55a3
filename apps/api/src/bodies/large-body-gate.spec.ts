import { LARGE_BODIES_PER_TENANT, LargeBodyGate } from './large-body-gate';

/** Which of `places` were admitted by now (after pending promise callbacks ran). */
async function admitted(places: { admitted: Promise<void> }[]): Promise<boolean[]> {
  const seen = places.map(() => false);
  places.forEach((place, i) => void place.admitted.then(() => (seen[i] = true)));
  await new Promise((resolve) => setImmediate(resolve));
  return seen;
}

describe('LargeBodyGate', () => {
  it('admits two large bodies per tenant by default', () => {
    expect(LARGE_BODIES_PER_TENANT).toBe(2);
  });

  it("holds a tenant's third body until one of its two leaves, while another tenant goes on", async () => {
    const gate = new LargeBodyGate(2);
    const alpha = [gate.enter('alpha'), gate.enter('alpha'), gate.enter('alpha'), gate.enter('alpha')];
    const beta = gate.enter('beta');
    expect(await admitted([...alpha, beta])).toEqual([true, true, false, false, true]);
    expect([gate.heldBy('alpha'), gate.heldBy('beta')]).toEqual([2, 1]);
    alpha[1].leave();
    // In arrival order: the third, not the fourth.
    expect(await admitted(alpha)).toEqual([true, true, true, false]);
    expect(gate.heldBy('alpha')).toBe(2);
  });

  it('forgets a body that leaves while waiting, and counts a leave once', async () => {
    const gate = new LargeBodyGate(1);
    const [first, second, third] = [gate.enter('alpha'), gate.enter('alpha'), gate.enter('alpha')];
    second.leave();
    first.leave();
    first.leave();
    expect(await admitted([first, second, third])).toEqual([true, false, true]);
    expect(gate.heldBy('alpha')).toBe(1);
    third.leave();
    expect(gate.heldBy('alpha')).toBe(0);
    // Nothing left over: a new body is admitted at once.
    expect(await admitted([gate.enter('alpha')])).toEqual([true]);
  });
});
