import { absentRunRetryMs, ABSENT_RUN_WINDOW_MS } from './absent-run-retry';

describe('absentRunRetryMs (a stream entry whose claim found no run)', () => {
  it('on one Redis drops it at once: its request went first on the same connection, so absent is final', () => {
    expect(absentRunRetryMs({ cluster: false, ageMs: 0, claims: 1 })).toBeNull();
  });

  it('on a cluster claims again after 10, 50 and 250 ms while the entry is younger than 1 s, then drops it', () => {
    expect([1, 2, 3, 4].map((claims) => absentRunRetryMs({ cluster: true, ageMs: 5, claims }))).toEqual([10, 50, 250, null]);
  });

  it('on a cluster drops an entry 1 s old or older at once (its request never landed)', () => {
    expect(absentRunRetryMs({ cluster: true, ageMs: ABSENT_RUN_WINDOW_MS, claims: 1 })).toBeNull();
    expect(absentRunRetryMs({ cluster: true, ageMs: ABSENT_RUN_WINDOW_MS - 1, claims: 1 })).toBe(10);
  });
});
