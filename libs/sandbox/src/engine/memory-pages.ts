/** Page size of the non-zero page scans (SPEC §3 counts snapshots in non-zero 4 KiB pages). */
export const SCAN_PAGE_BYTES = 4096;
const ZERO_PAGE = Buffer.alloc(SCAN_PAGE_BYTES);

/**
 * Visits the non-zero 4 KiB pages of a memory in order. Buffer.compare is a native memcmp per
 * page: ~0.6 ms for 16 MiB, against ~4-7 ms for a JS word loop.
 */
function eachNonZeroPage(bytes: Uint8Array, visit: (page: number) => void): void {
  const memory = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset < memory.length; offset += SCAN_PAGE_BYTES) {
    if (memory.compare(ZERO_PAGE, 0, SCAN_PAGE_BYTES, offset, offset + SCAN_PAGE_BYTES) !== 0) visit(offset / SCAN_PAGE_BYTES);
  }
}

/** Indexes of the non-zero 4 KiB pages of a memory: what an image stores. */
export function nonZeroPages(bytes: Uint8Array): number[] {
  const pages: number[] = [];
  eachNonZeroPage(bytes, (page) => pages.push(page));
  return pages;
}

/** How many 4 KiB pages of a memory are not all zero: what keeping it costs (SPEC §3 snapshot size). */
export function nonZeroPageCount(bytes: Uint8Array): number {
  let count = 0;
  eachNonZeroPage(bytes, () => (count += 1));
  return count;
}
