import { formatDuration, sessionName, sliceLines } from './format';
import { createSessionId } from './session-ids';

describe('format helpers', () => {
  it('formats compact durations', () => {
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(45_000)).toBe('45s');
    expect(formatDuration(125_000)).toBe('2m5s');
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(60_000)).toBe('1m');
  });

  it('slices log lines by offset and limit', () => {
    const text = 'a\nb\nc\nd\n';
    expect(sliceLines(text)).toEqual({ slice: 'a\nb\nc\nd', totalLines: 4, totalChars: 8 });
    expect(sliceLines(text, 1, 2).slice).toBe('b\nc');
    expect(sliceLines(text, 2).slice).toBe('c\nd');
    expect(sliceLines(text, undefined, 1).slice).toBe('d');
  });

  it('names sessions by verb and first argument', () => {
    expect(sessionName('npm run build --watch')).toBe('npm run');
    expect(sessionName("sleep '30'")).toBe('sleep 30');
    expect(sessionName('ls')).toBe('ls');
  });

  it('creates adjective-noun ids and climbs the ladder when taken', () => {
    expect(createSessionId()).toMatch(/^[a-z]+-[a-z]+$/);
    expect(createSessionId((id) => !/-\d+$/.test(id))).toMatch(/^[a-z]+-[a-z]+-\d+$/);
    expect(createSessionId((id) => !/^[a-z]+-[a-z]+-[a-z]+$/.test(id))).toMatch(/^[a-z]+-[a-z]+-[a-z]+$/);
  });
});
