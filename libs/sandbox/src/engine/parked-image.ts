import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { VmImageError } from '../errors';
import { CONSOLE_INSPECT_SOURCE } from '../guest/console-inspect';
import { DETERMINISM_SOURCE } from '../guest/determinism';
import { CELL_PREFIX, CELL_SUFFIX, PRELUDE_SOURCE } from '../guest/prelude';
import { TEXT_CODEC_SOURCE } from '../guest/text-codec';
import type { LedgerState } from './bridge-ledger';
import type { LegOutputState } from './leg-output';
import { SCAN_PAGE_BYTES } from './memory-pages';
import type { VmImage } from './vm-image';

/** Version of the envelope below; an image of another version is refused. */
export const PARKED_IMAGE_VERSION = 2;
const MAGIC = Buffer.from('CMPI', 'ascii');
const HEADER_BYTES = MAGIC.length + 1;
/**
 * The most an image may inflate to: the largest wasm memory a run may have (4 GiB, wasm32) is far
 * more than any clamp allows, so 2 GiB of pages plus 64 MiB of header bounds a corrupt or hostile
 * image without refusing a real one.
 */
const MAX_DECODED_BYTES = 2 * 1024 ** 3 + 64 * 1024 ** 2;

/** SPEC §12: the message of a run whose in-flight call cannot be settled after its worker stopped. */
export const RUN_LOST_PENDING_CALL_MESSAGE = 'code mode run lost a pending tool call when its worker stopped; start a new run.';

/**
 * The guest prelude/bridge version an image is bound to: a hash of every guest source the VM was
 * prepared with and the image format, so an upgrade that changes any of them refuses old images.
 */
export const GUEST_PRELUDE_VERSION = createHash('sha256')
  .update(
    JSON.stringify([
      PARKED_IMAGE_VERSION,
      TEXT_CODEC_SOURCE,
      CONSOLE_INSPECT_SOURCE,
      PRELUDE_SOURCE,
      DETERMINISM_SOURCE,
      CELL_PREFIX,
      CELL_SUFFIX,
    ]),
  )
  .digest('hex')
  .slice(0, 32);

/** The host side of a parked run the image carries beside its VM (CellRun's state at the park). */
export interface ParkedRunState {
  ledger: LedgerState;
  /** Due times (epoch ms) of the dispatched timers still open. */
  timers: [string, number][];
  /** A bridge request other than a yield was dispatched during the run. */
  dispatched: boolean;
  output: LegOutputState;
  /** The VM has the determinism host function (`clock`) of a restartSafe run. */
  seeded: boolean;
}

/** What an image is bound to: readable without inflating it (the worker stores these beside it). */
export interface ParkedImageBinding {
  wasmHash: string;
  preludeVersion: string;
}

/** Thrown when an image cannot be restored here (another binary, prelude or envelope version, or bytes that do not decode). */
export class ParkedImageMismatchError extends VmImageError {}

interface Header {
  version: number;
  /** The run it belongs to: an image is never restored as another run. */
  runId: string;
  wasmHash: string;
  preludeVersion: string;
  vm: Omit<VmImage, 'runs' | 'bytes'> & { runs: number[] };
  run: ParkedRunState;
}

/**
 * A parked run's image: magic, envelope version, then brotli (quality 1) of a length-prefixed JSON
 * header (bindings, VM pointers, host state) followed by the VM's stored pages. Measured on these
 * machines (parked tiny cell, 360 KiB of pages): brotli 1 takes 2 ms for 148 KiB, deflate level 1
 * 8 ms for 158 KiB; with 20 000 live objects (2.7 MiB) 10 ms for 557 KiB vs 21 ms for 606 KiB.
 */
export function encodeParkedImage(runId: string, vm: VmImage, run: ParkedRunState): Buffer {
  const { runs, bytes, ...pointers } = vm;
  const header: Header = {
    version: PARKED_IMAGE_VERSION,
    runId,
    wasmHash: vm.wasmHash,
    preludeVersion: GUEST_PRELUDE_VERSION,
    vm: { ...pointers, runs: [...runs] },
    run,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  const body = brotliCompressSync(Buffer.concat([length, json, bytes]), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
  return Buffer.concat([MAGIC, Buffer.from([PARKED_IMAGE_VERSION]), body]);
}

/**
 * Decodes the image of run `runId` for `expected`'s binary and prelude version.
 * @throws ParkedImageMismatchError when it is another run's, was made by another binary, prelude or envelope version, or does not decode
 */
export function decodeParkedImage(image: Uint8Array, runId: string, expected: ParkedImageBinding): { vm: VmImage; run: ParkedRunState } {
  const bytes = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ParkedImageMismatchError('not a parked run image');
  }
  if (bytes[MAGIC.length] !== PARKED_IMAGE_VERSION) {
    throw new ParkedImageMismatchError(`parked run image version ${bytes[MAGIC.length]} is not ${PARKED_IMAGE_VERSION}`);
  }
  let raw: Buffer;
  let header: Header;
  try {
    raw = brotliDecompressSync(bytes.subarray(HEADER_BYTES), { maxOutputLength: MAX_DECODED_BYTES });
    const length = raw.readUInt32LE(0);
    header = JSON.parse(raw.subarray(4, 4 + length).toString('utf8')) as Header;
    raw = raw.subarray(4 + length);
  } catch (error) {
    throw new ParkedImageMismatchError('parked run image does not decode', { cause: error });
  }
  if (header.runId !== runId) throw new ParkedImageMismatchError(`parked run image of run ${header.runId} is not run ${runId}'s`);
  checkBinding(header, expected);
  let pages = 0;
  for (let i = 1; i < header.vm.runs.length; i += 2) pages += header.vm.runs[i];
  if (raw.length !== pages * SCAN_PAGE_BYTES) {
    throw new ParkedImageMismatchError(`parked run image holds ${raw.length} bytes of pages, not the ${pages} pages its header lists`);
  }
  const vm: VmImage = { ...header.vm, runs: Uint32Array.from(header.vm.runs), bytes: new Uint8Array(raw) };
  return { vm, run: header.run };
}

/** @throws ParkedImageMismatchError unless the image was made by this binary and prelude. */
export function checkBinding(found: ParkedImageBinding, expected: ParkedImageBinding): void {
  if (found.wasmHash !== expected.wasmHash) {
    throw new ParkedImageMismatchError(
      `parked run image of wasm ${found.wasmHash.slice(0, 12)} is not for wasm ${expected.wasmHash.slice(0, 12)}`,
    );
  }
  if (found.preludeVersion !== expected.preludeVersion) {
    throw new ParkedImageMismatchError(`parked run image of prelude ${found.preludeVersion} is not for prelude ${expected.preludeVersion}`);
  }
}
