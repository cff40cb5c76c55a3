import { ReadOffsetError, UnreadableFileError, WorkspacePathKindError } from '../errors';
import type { ReadInput } from './inputs';
import { formatSize, looksBinary, MAX_OUTPUT_BYTES, READ_MAX_FILE_BYTES, READ_MAX_LINES, utf8Bytes } from './limits';
import { WorkspaceHandle } from './workspace-handle';
import { resolveWorkspacePath, type Workspace, type WorkspacePath } from './workspace-path';

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

function splitLines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const lines = text.split(/\r?\n/u);
  // A final newline ends the last line; it does not start an empty one.
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/** Largest prefix of `line` within `maxBytes` UTF-8 bytes, never splitting a character. */
function utf8Prefix(line: string, maxBytes: number): string {
  const bytes = Buffer.from(line, 'utf8');
  let end = Math.min(maxBytes, bytes.length);
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) {
    end -= 1;
  }
  return bytes.subarray(0, end).toString('utf8');
}

/** The bytes of a text file, read through a descriptor checked to be inside the workspace. */
async function readTextFile(workspace: Workspace, target: WorkspacePath, shownPath: string): Promise<Buffer> {
  const { relative } = target;
  const file = await WorkspaceHandle.open(workspace, target.absolute, shownPath);
  try {
    if (!file.stats.isFile()) {
      throw new WorkspacePathKindError(relative, 'file');
    }
    if (file.stats.size > READ_MAX_FILE_BYTES) {
      throw new UnreadableFileError(relative, 'too_large', file.stats.size, READ_MAX_FILE_BYTES);
    }
    const buffer = await file.readBytes();
    if (looksBinary(buffer)) {
      throw new UnreadableFileError(relative, 'binary', buffer.length, READ_MAX_FILE_BYTES);
    }
    return buffer;
  } finally {
    await file.close();
  }
}

/**
 * Reads a text file of the workspace: at most 2000 lines or 50 KB per call (whole lines), starting
 * at `offset`; the notice says how to continue.
 */
export async function readTool(workspace: Workspace, input: ReadInput): Promise<ReadResult> {
  const target = await resolveWorkspacePath(workspace, input.path);
  const buffer = await readTextFile(workspace, target, input.path);
  const lines = splitLines(buffer.toString('utf8'));
  const totalLines = lines.length;
  const startIndex = (input.offset ?? 1) - 1;
  if (startIndex > 0 && startIndex >= totalLines) {
    throw new ReadOffsetError(input.offset ?? 1, totalLines);
  }
  const requestedEnd = input.limit === undefined ? totalLines : Math.min(totalLines, startIndex + input.limit);
  const selected: string[] = [];
  let bytes = 0;
  let truncatedBy: 'lines' | 'bytes' | undefined;
  for (let index = startIndex; index < requestedEnd; index += 1) {
    if (selected.length >= READ_MAX_LINES) {
      truncatedBy = 'lines';
      break;
    }
    const line = lines[index];
    const cost = utf8Bytes(line) + (selected.length > 0 ? 1 : 0);
    if (bytes + cost > MAX_OUTPUT_BYTES) {
      truncatedBy = 'bytes';
      break;
    }
    bytes += cost;
    selected.push(line);
  }
  const startLine = startIndex + 1;
  if (selected.length === 0 && truncatedBy === 'bytes') {
    // One line larger than the whole budget: show its head rather than nothing.
    const line = lines[startIndex];
    return {
      path: target.relative,
      content: utf8Prefix(line, MAX_OUTPUT_BYTES),
      startLine,
      endLine: startLine,
      totalLines,
      truncated: true,
      ...(startLine < totalLines ? { nextOffset: startLine + 1 } : {}),
      notice: `[Line ${startLine} is ${formatSize(utf8Bytes(line))}, over the ${formatSize(MAX_OUTPUT_BYTES)} limit; showing its first ${formatSize(MAX_OUTPUT_BYTES)}. Use grep to find what you need in it.]`,
    };
  }
  const endLine = startIndex + selected.length;
  const base = { path: target.relative, content: selected.join('\n'), startLine, endLine, totalLines };
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
