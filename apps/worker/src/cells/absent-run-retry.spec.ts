import { absentRunRetryMs } from './absent-run-retry';

describe('absentRunRetryMs (a stream entry whose claim found no run)', () => {
  it('claims again after 10, 50 and 250 ms (its request may land just after it), then drops it', () => {
    expect([1, 2, 3, 4].map((claims) => absentRunRetryMs(claims))).toEqual([10, 50, 250, null]);
  });
});
