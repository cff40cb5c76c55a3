import { encodeKeys, encodePaste } from './key-table';

const enc = (keys: string[], mode?: 'normal' | 'application') => encodeKeys({ keys }, mode).data.toString('latin1');

describe('key table', () => {
  it('encodes named keys and control chords', () => {
    expect(enc(['C-c'])).toBe('\x03');
    expect(enc(['^D'])).toBe('\x04');
    expect(enc(['Enter', 'Tab', 'Escape', 'Space', 'BSpace'])).toBe('\r\t\x1b \x7f');
    expect(enc(['Up', 'Down', 'Right', 'Left'])).toBe('\x1b[A\x1b[B\x1b[C\x1b[D');
    expect(enc(['PageUp', 'Delete', 'F1', 'F12', 'BTab', 'S-Tab'])).toBe('\x1b[5~\x1b[3~\x1bOP\x1b[24~\x1b[Z\x1b[Z');
  });

  it('applies xterm modifiers, alt prefixes and application cursor mode', () => {
    expect(enc(['C-Up'])).toBe('\x1b[1;5A');
    expect(enc(['S-Delete'])).toBe('\x1b[3;2~');
    expect(enc(['M-x', 'C-M-a'])).toBe('\x1bx\x1b\x01');
    expect(enc(['Up'], 'application')).toBe('\x1bOA');
  });

  it('sends literal text first, then raw hex bytes, then keys, and warns on bad hex', () => {
    const { data, warnings } = encodeKeys({ literal: 'hi', hex: ['0x1b', 'ff', 'zz'], keys: ['Enter'] });
    expect([...data]).toEqual([0x68, 0x69, 0x1b, 0xff, 0x0d]);
    expect(warnings).toEqual(['Invalid hex byte: zz']);
  });

  it('wraps pastes in bracketed-paste markers unless told not to', () => {
    expect(encodePaste('x')).toBe('\x1b[200~x\x1b[201~');
    expect(encodePaste('x', false)).toBe('x');
  });
});
