/** Hash slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16_384;

/** CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The slot of a key or a sharded channel, hash tags included (`{…}`, the first non-empty one). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(Buffer.from(hashed, 'utf8')) % CLUSTER_SLOTS;
}

let slotTags: string[] | undefined;

/**
 * A short hash tag that lands in `slot` (the smallest decimal number that does): built once, by
 * hashing numbers until every slot has one (~170,000 hashes, a few ms).
 */
export function slotTag(slot: number): string {
  if (slotTags === undefined) {
    const tags = new Array<string>(CLUSTER_SLOTS);
    let found = 0;
    for (let n = 0; found < CLUSTER_SLOTS; n += 1) {
      const tag = String(n);
      const at = keySlot(tag);
      if (tags[at] === undefined) {
        tags[at] = tag;
        found += 1;
      }
    }
    slotTags = tags;
  }
  return slotTags[slot];
}
