import { nonZeroPageCount, nonZeroPages, SCAN_PAGE_BYTES, zeroFill } from './memory-pages';

describe('memory pages', () => {
  it('finds the 4 KiB pages holding any non-zero byte, in order, and counts them', () => {
    const memory = new Uint8Array(8 * SCAN_PAGE_BYTES);
    memory[0] = 1;
    memory[3 * SCAN_PAGE_BYTES + SCAN_PAGE_BYTES - 1] = 255;
    memory[6 * SCAN_PAGE_BYTES + 17] = 7;
    expect(nonZeroPages(memory)).toEqual([0, 3, 6]);
    expect(nonZeroPageCount(memory)).toBe(3);
  });

  it('an all-zero memory has no page', () => {
    const memory = new Uint8Array(4 * SCAN_PAGE_BYTES);
    expect(nonZeroPages(memory)).toEqual([]);
    expect(nonZeroPageCount(memory)).toBe(0);
  });

  it('reads a view at its own offset, not the whole buffer behind it', () => {
    const buffer = new Uint8Array(4 * SCAN_PAGE_BYTES);
    buffer[0] = 9;
    buffer[2 * SCAN_PAGE_BYTES + 5] = 9;
    const view = buffer.subarray(SCAN_PAGE_BYTES);
    expect(nonZeroPages(view)).toEqual([1]);
    expect(nonZeroPageCount(view)).toBe(1);
  });

  it('zero-fills every byte: in the first, a middle and a last, partial chunk, and only within a view', () => {
    const chunk = 64 * 1024;
    const buffer = new Uint8Array(5 * chunk + 3 * SCAN_PAGE_BYTES + 2);
    const view = buffer.subarray(1, buffer.length - 1);
    // Within the view (it starts at byte 1): its first byte; the last of its first chunk; the first
    // of its second chunk, alone there; a middle one; the last byte of its last, partial chunk.
    const marked = [1, chunk, chunk + 1, 2 * chunk + 12345, buffer.length - 2];
    for (const at of marked) buffer[at] = 0xa5;
    // Outside the view: left alone.
    buffer[0] = 0xa5;
    buffer[buffer.length - 1] = 0x5a;
    zeroFill(view);
    expect(view.every((byte) => byte === 0)).toBe(true);
    expect([buffer[0], buffer[buffer.length - 1]]).toEqual([0xa5, 0x5a]);
  });
});
