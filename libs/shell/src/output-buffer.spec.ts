import { OutputBuffer, tailOf } from './output-buffer';

describe('OutputBuffer', () => {
  it('keeps the newest maxOutputChars in the aggregate and marks it truncated', () => {
    const buffer = new OutputBuffer(10, 10);
    buffer.append('stdout', 'abcdefgh');
    buffer.append('stdout', 'ijklmn');
    expect(buffer.aggregated).toBe('efghijklmn');
    expect(buffer.truncated).toBe(true);
    expect(buffer.totalChars).toBe(14);
  });

  it('drops the oldest pending text of the overflowing stream only', () => {
    const buffer = new OutputBuffer(100, 6);
    buffer.append('stderr', 'EE');
    buffer.append('stdout', 'aaaa');
    buffer.append('stdout', 'bbbb');
    const { output, dropped } = buffer.drain();
    expect(output).toBe('EEaabbbb');
    expect(dropped).toBe(true);
    expect(buffer.drain()).toEqual({ output: '', dropped: false });
  });

  it('tails at 2000 chars without splitting surrogate pairs', () => {
    expect(tailOf('x'.repeat(2500))).toHaveLength(2000);
    expect(tailOf(`a${'😀'.repeat(3)}`, 5)).toBe('😀😀');
  });
});
