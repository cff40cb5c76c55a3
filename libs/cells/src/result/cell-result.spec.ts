import type { CodeModeOutput, CodeModeResult } from '@codemode/contracts';
import { CodeModeResultSchema } from '@codemode/contracts';
import type { TerminalCellOutcome as CellOutcome } from '../outcome';
import { buildCellResult, emptyTelemetry, failedInputResult } from './cell-result';
import {
  OUTPUT_LIMIT_EXCEEDED_ERROR,
  OUTPUT_TRUNCATED_TEXT,
  PREFIX_GUIDANCE,
  REFERENCE_GUIDANCE,
  RESTART_SAFE_GUIDANCE,
} from './truncation-text';

const telemetry = emptyTelemetry();
const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');
const text = (t: string): CodeModeOutput => ({ type: 'text', text: t });

function completed(valueJson: string, output: CodeModeOutput[] = []): CellOutcome {
  return { status: 'completed', valueJson, output, bridgeDispatchStarted: false, consoleTruncated: false };
}

async function build(
  outcome: CellOutcome,
  maxOutputBytes: number,
  extra: {
    priorOutputBytes?: number;
    restartSafe?: boolean;
    saveReference?: (json: string) => Promise<Record<string, unknown> | null>;
  } = {},
) {
  const built = await buildCellResult({
    outcome,
    limits: { maxOutputBytes },
    restartSafe: extra.restartSafe ?? false,
    telemetry,
    priorOutputBytes: extra.priorOutputBytes ?? 0,
    saveReference: extra.saveReference,
  });
  expect(CodeModeResultSchema.parse(built.result)).toEqual(built.result);
  return built;
}

/** Shared-budget invariant: output plus value or error never exceed what the run had left. */
function charged(result: CodeModeResult): number {
  let total = result.output ? bytes(result.output) : 0;
  if (result.status === 'completed') total += bytes(result.value);
  if (result.status === 'failed') total += bytes(result.error);
  return total;
}

describe('buildCellResult', () => {
  it('returns small results untouched, omits empty output, mirrors replaySafe', async () => {
    const { result, outputBytes } = await build(completed('{"a":1}'), 1024, { restartSafe: true });
    expect(result).toEqual({ status: 'completed', value: { a: 1 }, replaySafe: true, telemetry });
    expect(outputBytes).toBe(0);
  });

  it('reports the exact UTF-8 bytes of the returned output', async () => {
    const output = [text('héllo 🦞'), { type: 'json', value: { n: 1 } } as CodeModeOutput];
    const { result, outputBytes } = await build(completed('null', output), 1024);
    expect(result).toMatchObject({ status: 'completed', value: null, output });
    // [{"type":"text","text":"héllo 🦞"},{"type":"json","value":{"n":1}}]
    expect(outputBytes).toBe(2 + 36 + 1 + 31);
    expect(outputBytes).toBe(bytes(output));
  });

  it('cuts 100 entries at entry boundaries under a 10 KiB budget, keeping the earliest', async () => {
    const output = Array.from({ length: 100 }, (_, i) => text(`line ${String(i).padStart(3, '0')} ${'x'.repeat(180)}`));
    const entryBytes = bytes(output[0]);
    expect(entryBytes).toBe(214);
    const { result, outputBytes } = await build(completed('"done"', output), 10 * 1024);
    // Value needs 6 bytes, so output may use 10240 - 6 = 10234: k entries + marker must fit.
    // Each kept entry costs 214 + 1 comma, the marker entry 43:  2 + 215k + 43 <= 10234  =>  k = 47.
    const kept = result.output ?? [];
    expect(kept).toHaveLength(48);
    expect(kept.slice(0, 47)).toEqual(output.slice(0, 47));
    expect(kept[47]).toEqual(text(OUTPUT_TRUNCATED_TEXT));
    expect(kept.filter((e) => e.type === 'text' && e.text === OUTPUT_TRUNCATED_TEXT)).toHaveLength(1);
    expect(outputBytes).toBe(2 + 47 * 215 + 43);
    expect(result).toMatchObject({ status: 'completed', value: 'done' });
    expect(charged(result)).toBeLessThanOrEqual(10 * 1024);
  });

  it.each([
    { name: 'ASCII string', json: JSON.stringify('a'.repeat(998)), limit: 107, prefix: '', omitted: 1000 },
    { name: 'ASCII string +1', json: JSON.stringify('a'.repeat(998)), limit: 108, prefix: '"', omitted: 999 },
    { name: 'ASCII string +2', json: JSON.stringify('a'.repeat(998)), limit: 109, prefix: '"a', omitted: 998 },
    // Lobster is 4 UTF-8 bytes / 2 UTF-16 units; 6 and 7 bytes of room must not split it.
    { name: 'emoji at the cut', json: JSON.stringify('🦞'.repeat(500)), limit: 107 + 6, prefix: '"🦞', omitted: 2002 - 5 },
    { name: 'emoji one short', json: JSON.stringify('🦞'.repeat(500)), limit: 107 + 4, prefix: '"', omitted: 2001 },
  ])('replaces an oversized value by a prefix marker: $name', async ({ json, limit, prefix, omitted }) => {
    const { result } = await build(completed(json), limit);
    expect(result).toEqual({
      status: 'completed',
      value: { truncated: true, omittedBytes: omitted, guidance: PREFIX_GUIDANCE, prefix },
      replaySafe: false,
      telemetry,
    });
    expect(bytes((result as { value: unknown }).value)).toBeLessThanOrEqual(limit);
  });

  it('keeps a long multi-byte prefix UTF-8 safe and accounts omitted bytes exactly', async () => {
    const original = { rows: Array.from({ length: 400 }, (_, id) => ({ id, title: 'row 🦞 漢字' })) };
    const json = JSON.stringify(original);
    const { result } = await build(completed(json), 4096, { restartSafe: true });
    const marker = (result as { value: { prefix: string; omittedBytes: number; guidance: string } }).value;
    expect(marker.guidance).toBe(RESTART_SAFE_GUIDANCE);
    expect(json.startsWith(marker.prefix)).toBe(true);
    expect(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(marker.prefix))).toBe(marker.prefix);
    expect(marker.omittedBytes).toBe(Buffer.byteLength(json) - Buffer.byteLength(marker.prefix));
    expect(bytes(marker)).toBeLessThanOrEqual(4096);
    expect(bytes(marker)).toBeGreaterThan(4096 - 8);
  });

  it('saves an oversized object as a reference when allowed', async () => {
    const json = JSON.stringify(Array.from({ length: 300 }, (_, id) => ({ id })));
    const reference = { id: 'res_1', bytes: Buffer.byteLength(json), count: 300, shape: 'array', preview: '[…]', previewTruncated: true };
    const saveReference = jest.fn(async () => reference);
    const { result } = await build(completed(json), 2048, { saveReference });
    expect(saveReference).toHaveBeenCalledWith(json);
    expect(result).toMatchObject({ status: 'completed', value: { truncated: true, reference, guidance: REFERENCE_GUIDANCE } });
    expect(REFERENCE_GUIDANCE).toContain('results.load');
  });

  it.each([
    {
      name: 'a string value',
      json: JSON.stringify('s'.repeat(5000)),
      restartSafe: false,
      saved: null,
      guidance: PREFIX_GUIDANCE,
      calls: 0,
    },
    {
      name: 'a restart-safe cell',
      json: JSON.stringify(['s'.repeat(5000)]),
      restartSafe: true,
      saved: { id: 'r' },
      guidance: RESTART_SAFE_GUIDANCE,
      calls: 0,
    },
    {
      name: 'a full results store',
      json: JSON.stringify(['s'.repeat(5000)]),
      restartSafe: false,
      saved: null,
      guidance: PREFIX_GUIDANCE,
      calls: 1,
    },
  ])('falls back to a prefix marker for $name', async ({ json, restartSafe, saved, guidance, calls }) => {
    const saveReference = jest.fn(async () => saved);
    const { result } = await build(completed(json), 2048, { restartSafe, saveReference });
    expect(saveReference).toHaveBeenCalledTimes(calls);
    expect(result).toMatchObject({ status: 'completed', value: { truncated: true, guidance } });
    expect(result.replaySafe).toBe(restartSafe);
  });

  it('cuts an oversized error, keeping its cause, within the whole budget when there is no output', async () => {
    const outcome: CellOutcome = {
      status: 'failed',
      error: 'Error: ' + 'E'.repeat(5000),
      code: 'internal_error',
      phase: 'guest',
      output: [],
      bridgeDispatchStarted: true,
      consoleTruncated: false,
    };
    const { result } = await build(outcome, 1024);
    // 2 quotes + prefix + 18-byte suffix = 1024  =>  1004-unit prefix.
    expect(result).toEqual({
      status: 'failed',
      error: 'Error: ' + 'E'.repeat(997) + ' [error truncated]',
      code: 'internal_error',
      failurePhase: 'guest',
      bridgeDispatchStarted: true,
      replaySafe: false,
      telemetry,
    });
  });

  it('gives a failing cell half the budget for its error and the rest to output', async () => {
    const output = Array.from({ length: 40 }, (_, i) => text(`${i}:${'o'.repeat(60)}`));
    const outcome: CellOutcome = {
      status: 'failed',
      error: '漢'.repeat(1000),
      code: 'timeout',
      phase: 'guest',
      output,
      bridgeDispatchStarted: false,
      consoleTruncated: false,
    };
    const { result, outputBytes } = await build(outcome, 2048);
    if (result.status !== 'failed') throw new Error('expected failed');
    // Error allowance is 2048 - min(outputBytes, 1024) = 1024: 2 + 3n + 18 <= 1024  =>  n = 334.
    expect(result.error).toBe('漢'.repeat(334) + ' [error truncated]');
    expect(bytes(result.error)).toBe(1022);
    expect(result.output?.at(-1)).toEqual(text(OUTPUT_TRUNCATED_TEXT));
    expect(outputBytes).toBe(bytes(result.output));
    expect(charged(result)).toBeLessThanOrEqual(2048);
  });

  it('draws on what earlier waits already returned', async () => {
    const output = Array.from({ length: 10 }, (_, i) => text(`${i}${'p'.repeat(98)}`));
    const entry = bytes(output[0]);
    expect(entry).toBe(124);
    const { result, outputBytes } = await build(completed('1', output), 2048, { priorOutputBytes: 1500 });
    // 548 left, value takes 1: 2 + 125k + 43 <= 547  =>  k = 4.
    expect(result.output).toEqual([...output.slice(0, 4), text(OUTPUT_TRUNCATED_TEXT)]);
    expect(outputBytes).toBe(2 + 4 * 125 + 43);
    expect(result).toMatchObject({ status: 'completed', value: 1 });
  });

  it('drops output rather than lose the value marker', async () => {
    const output = [text('z'.repeat(200))];
    const { result, outputBytes } = await build(completed(JSON.stringify('v'.repeat(500)), output), 2048, {
      priorOutputBytes: 2048 - 140,
    });
    // 140 left: output may take 70 (its 45-byte marker), leaving 95 < the 106-byte empty marker;
    // with the output dropped the marker gets all 140.
    expect(result.output).toBeUndefined();
    expect(outputBytes).toBe(0);
    expect(result).toMatchObject({ status: 'completed', value: { truncated: true, guidance: PREFIX_GUIDANCE } });
  });

  it('fails with output_limit_exceeded only when not even a marker fits', async () => {
    // 100 bytes left and a 502-byte string: its empty-prefix marker alone needs 106.
    const value = JSON.stringify('v'.repeat(500));
    const { result, outputBytes } = await build(completed(value, [text('hi')]), 1024, { priorOutputBytes: 1024 - 100 });
    expect(result).toEqual({
      status: 'failed',
      error: OUTPUT_LIMIT_EXCEEDED_ERROR,
      code: 'output_limit_exceeded',
      failurePhase: 'host',
      bridgeDispatchStarted: false,
      output: [text('hi')],
      replaySafe: false,
      telemetry,
    });
    expect(outputBytes).toBe(bytes([text('hi')]));
    const tiny = await build(completed('12345'), 1024, { priorOutputBytes: 1024 - 5 });
    expect(tiny.result).toMatchObject({ status: 'completed', value: 12345 });
  });
});

describe('failedInputResult and emptyTelemetry', () => {
  it('builds an input refusal', () => {
    expect(failedInputResult('title is required.', telemetry, true)).toEqual({
      status: 'failed',
      error: 'title is required.',
      code: 'invalid_input',
      failurePhase: 'input',
      bridgeDispatchStarted: false,
      replaySafe: true,
      telemetry,
    });
  });

  it('starts all counters at zero', () => {
    expect(emptyTelemetry()).toEqual({
      catalogSize: 0,
      sources: { openclaw: 0, mcp: 0, client: 0 },
      searchCount: 0,
      describeCount: 0,
      callCount: 0,
      counterScope: 'run',
      visibleTools: ['exec', 'wait'],
    });
  });
});
