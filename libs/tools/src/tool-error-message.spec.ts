import { toolErrorMessage } from './tool-error-message';

describe('toolErrorMessage', () => {
  it('joins the text content of an MCP isError result', () => {
    const result = {
      isError: true,
      content: [
        { type: 'text', text: 'fixture failure' },
        { type: 'image', data: 'x' },
        { type: 'text', text: 'why' },
      ],
    };
    expect(toolErrorMessage(result)).toBe('fixture failure\nwhy');
  });

  it('prefers an explicit message, then error strings', () => {
    expect(toolErrorMessage(new Error('boom'))).toBe('boom');
    expect(toolErrorMessage({ message: 'explicit', content: [{ type: 'text', text: 'text' }] })).toBe('explicit');
    expect(toolErrorMessage({ error: 'locked' })).toBe('locked');
    expect(toolErrorMessage({ error: { message: 'nested' } })).toBe('nested');
  });

  it('carries the tool text when there is no message', () => {
    expect(toolErrorMessage({ message: '', text: 'No session found for abc', details: { status: 'failed' } })).toBe(
      'No session found for abc',
    );
    expect(toolErrorMessage('plain text')).toBe('plain text');
    expect(toolErrorMessage({ isError: true, content: [], structuredContent: { code: 7 } })).toBe('{"code":7}');
  });

  it('falls back when nothing says what happened, and bounds long text', () => {
    expect(toolErrorMessage({ isError: true, content: [] })).toBe('tool call failed');
    expect(toolErrorMessage(undefined, 'client tool failed')).toBe('client tool failed');
    expect(toolErrorMessage('x'.repeat(20_000)).endsWith(' [truncated]')).toBe(true);
  });
});
