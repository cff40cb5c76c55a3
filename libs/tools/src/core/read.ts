import { ReadOffsetError, UnreadableFileError, WorkspacePathKindError } from '../errors';
import { SHARED_SLICES, type EventLoopSlices } from './event-loop-slices';
import type { ReadInput } from './inputs';
import { formatSize, looksBinary, MAX_OUTPUT_BYTES, READ_MAX_FILE_BYTES, READ_MAX_LINES, utf8Bytes } from './limits';
import { openGuestPath, type WorkspaceEntry } from './workspace-entry';
import type { Workspace } from './workspace-path';

/** What `read` returns. Lines are 1-based; `content` holds lines `startLine..endLine`. */
export interface ReadResult {
  readonly path: string;
  readonly content: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly totalLines: number;
  readonly truncated: boolean;
  /** Where the next call should start when lines remain. */
  readonly nextOffset?: number;
  /** OpenClaw-style continuation note, e.g. `[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]`. */
  readonly notice?: string;
}

/** Bytes read from the file at a time: a 64 MiB file is never held whole. */
const READ_CHUNK_BYTES = 1024 * 1024;
/** Bytes counted between two checks of the event-loop slice (about 0.1 ms of work each). */
const COUNT_STEP_BYTES = 64 * 1024;
/** Of a line over the output budget, the bytes kept to show its head (a few more than the budget,
 * so the head can end on a whole character). */
const LONG_LINE_HEAD_BYTES = MAX_OUTPUT_BYTES + 4;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** Largest prefix of `bytes` within `maxBytes`, never splitting a UTF-8 character. */
function utf8Prefix(bytes: Buffer, maxBytes: number): string {
  let end = Math.min(maxBytes, bytes.length);
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) {
    end -= 1;
  }
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * One pass over a file's bytes, chunk by chunk: counts its lines and keeps only the lines `read`
 * returns (at most 2000 lines and 50 KB from `startIndex`), so the cost in memory is one chunk
 * and the cost on the event loop is a few milliseconds per slice. Lines end at `\n` (a `\r` before
 * it is dropped); a final newline ends the last line rather than starting an empty one.
 */
class LineSelection {
  /** Lines ended so far: the 0-based index of the line being read. */
  private lineIndex = 0;
  private lastByte = NEWLINE;
  /** Pieces of the current line, kept while it is one `read` may return. */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** Raw length of the current line so far, and its last byte. */
  private lineBytes = 0;
  private lineLastByte = -1;
  private outputBytes = 0;
  readonly selected: string[] = [];
  truncatedBy: 'lines' | 'bytes' | undefined;
  /** The first requested line, when it alone is over the output budget: its head and size. */
  oversized: { head: string; bytes: number } | undefined;

  constructor(
    private readonly startIndex: number,
    private readonly endIndex: number,
    private readonly slices: EventLoopSlices,
  ) {}

  /** Lines of the file, once every chunk was fed and `finish` called. */
  get totalLines(): number {
    return this.lineIndex;
  }

  async feed(chunk: Buffer): Promise<void> {
    let position = 0;
    while (position < chunk.length) {
      position = this.selecting() ? this.collect(chunk, position) : this.count(chunk, position);
      await this.slices.pause();
    }
    if (chunk.length > 0) {
      this.lastByte = chunk[chunk.length - 1];
    }
  }

  /** Ends the last line when the file does not end with a newline. */
  finish(): void {
    if (this.lastByte !== NEWLINE) {
      if (this.selecting()) {
        this.endLine(false);
      }
      this.lineIndex += 1;
    }
  }

  private selecting(): boolean {
    return this.truncatedBy === undefined && this.lineIndex >= this.startIndex && this.lineIndex < this.endIndex;
  }

  /** Counts newlines up to the first selected line or one step of bytes; returns where it stopped. */
  private count(chunk: Buffer, from: number): number {
    const end = Math.min(chunk.length, from + COUNT_STEP_BYTES);
    const stopAt = this.lineIndex < this.startIndex ? this.startIndex : Number.POSITIVE_INFINITY;
    for (let index = from; index < end; index += 1) {
      if (chunk[index] === NEWLINE) {
        this.lineIndex += 1;
        if (this.lineIndex === stopAt) {
          return index + 1;
        }
      }
    }
    return end;
  }

  /** Takes the current line's bytes up to its newline or the chunk's end; returns where it stopped. */
  private collect(chunk: Buffer, from: number): number {
    const newline = chunk.indexOf(NEWLINE, from);
    const end = newline === -1 ? chunk.length : newline;
    const keep = Math.min(end - from, LONG_LINE_HEAD_BYTES - this.partBytes);
    if (keep > 0) {
      this.parts.push(Buffer.from(chunk.subarray(from, from + keep)));
      this.partBytes += keep;
    }
    if (end > from) {
      this.lineBytes += end - from;
      this.lineLastByte = chunk[end - 1];
    }
    if (newline === -1) {
      return chunk.length;
    }
    this.endLine(true);
    this.lineIndex += 1;
    return newline + 1;
  }

  private endLine(byNewline: boolean): void {
    let bytes = Buffer.concat(this.parts);
    let lineBytes = this.lineBytes;
    if (byNewline && lineBytes > 0 && this.lineLastByte === CARRIAGE_RETURN) {
      lineBytes -= 1;
      bytes = bytes.subarray(0, Math.min(bytes.length, lineBytes));
    }
    this.parts = [];
    this.partBytes = 0;
    this.lineBytes = 0;
    this.lineLastByte = -1;
    if (this.selected.length >= READ_MAX_LINES) {
      this.truncatedBy = 'lines';
      return;
    }
    const separator = this.selected.length > 0 ? 1 : 0;
    const line = lineBytes + separator + this.outputBytes <= MAX_OUTPUT_BYTES ? bytes.toString('utf8') : undefined;
    const cost = line === undefined ? Number.POSITIVE_INFINITY : utf8Bytes(line) + separator;
    if (line === undefined || this.outputBytes + cost > MAX_OUTPUT_BYTES) {
      this.truncatedBy = 'bytes';
      if (this.selected.length === 0) {
        this.oversized = { head: utf8Prefix(bytes, MAX_OUTPUT_BYTES), bytes: line === undefined ? lineBytes : utf8Bytes(line) };
      }
      return;
    }
    this.outputBytes += cost;
    this.selected.push(line);
  }
}

/**
 * Reads a text file through its descriptor, in chunks, selecting the requested lines.
 * @throws UnreadableFileError for a binary file (a NUL byte among its first bytes).
 */
async function selectLines(file: WorkspaceEntry, selection: LineSelection, slices: EventLoopSlices): Promise<void> {
  // No more than fstat reported at open: a file growing meanwhile cannot push a read past the limit checked.
  const size = file.stats.size;
  let position = 0;
  while (position < size) {
    const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, size - position));
    const bytesRead = await file.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) {
      break;
    }
    const filled = chunk.subarray(0, bytesRead);
    if (position === 0 && looksBinary(filled)) {
      throw new UnreadableFileError(file.relative, 'binary', size, READ_MAX_FILE_BYTES);
    }
    position += bytesRead;
    await selection.feed(filled);
    await slices.pause();
  }
  selection.finish();
}

/** Opens the text file a guest path names, through the workspace's descriptors. */
async function openTextFile(workspace: Workspace, shownPath: string): Promise<WorkspaceEntry> {
  const file = await openGuestPath(workspace, shownPath);
  try {
    if (file.kind === 'directory') {
      throw new WorkspacePathKindError(file.relative, 'file');
    }
    if (file.kind === 'other') {
      throw new UnreadableFileError(file.relative, 'special', file.stats.size, READ_MAX_FILE_BYTES);
    }
    if (file.stats.size > READ_MAX_FILE_BYTES) {
      throw new UnreadableFileError(file.relative, 'too_large', file.stats.size, READ_MAX_FILE_BYTES);
    }
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * Reads a text file of the workspace: at most 2000 lines or 50 KB per call (whole lines), starting
 * at `offset`; the notice says how to continue.
 */
export async function readTool(workspace: Workspace, input: ReadInput): Promise<ReadResult> {
  const slices = SHARED_SLICES;
  const startIndex = (input.offset ?? 1) - 1;
  const endIndex = input.limit === undefined ? Number.POSITIVE_INFINITY : startIndex + input.limit;
  const selection = new LineSelection(startIndex, endIndex, slices);
  const file = await openTextFile(workspace, input.path);
  const path = file.relative;
  try {
    await selectLines(file, selection, slices);
  } finally {
    await file.close();
  }
  const { totalLines, selected, truncatedBy, oversized } = selection;
  if (startIndex > 0 && startIndex >= totalLines) {
    throw new ReadOffsetError(input.offset ?? 1, totalLines);
  }
  const startLine = startIndex + 1;
  if (oversized) {
    // One line larger than the whole budget: show its head rather than nothing.
    return {
      path,
      content: oversized.head,
      startLine,
      endLine: startLine,
      totalLines,
      truncated: true,
      ...(startLine < totalLines ? { nextOffset: startLine + 1 } : {}),
      notice: `[Line ${startLine} is ${formatSize(oversized.bytes)}, over the ${formatSize(MAX_OUTPUT_BYTES)} limit; showing its first ${formatSize(MAX_OUTPUT_BYTES)}. Use grep to find what you need in it.]`,
    };
  }
  const endLine = startIndex + selected.length;
  const base = { path, content: selected.join('\n'), startLine, endLine, totalLines };
  if (truncatedBy) {
    const limitNote = truncatedBy === 'bytes' ? ` (${formatSize(MAX_OUTPUT_BYTES)} limit)` : '';
    return {
      ...base,
      truncated: true,
      nextOffset: endLine + 1,
      notice: `[Showing lines ${startLine}-${endLine} of ${totalLines}${limitNote}. Use offset=${endLine + 1} to continue.]`,
    };
  }
  if (endLine < totalLines) {
    return {
      ...base,
      truncated: false,
      nextOffset: endLine + 1,
      notice: `[${totalLines - endLine} more lines in file. Use offset=${endLine + 1} to continue.]`,
    };
  }
  return { ...base, truncated: false };
}
