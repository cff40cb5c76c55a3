import { absentRunRetryMs, ABSENT_RUN_WINDOW_MS } from './absent-run-retry';

describe('absentRunRetryMs (a stream entry whose claim found no run)', () => {
  it('claims again after 10, 50 and 250 ms while the entry is younger than 1 s (its request may land just after it), then drops it', () => {
    expect([1, 2, 3, 4].map((claims) => absentRunRetryMs({ ageMs: 5, claims }))).toEqual([10, 50, 250, null]);
  });

  it('drops an entry 1 s old or older at once (its request never landed)', () => {
    expect(absentRunRetryMs({ ageMs: ABSENT_RUN_WINDOW_MS, claims: 1 })).toBeNull();
    expect(absentRunRetryMs({ ageMs: ABSENT_RUN_WINDOW_MS - 1, claims: 1 })).toBe(10);
  });
});
