import { createHmac } from 'node:crypto';
import { signWebhookBody, verifyWebhookSignature } from './signature';

describe('webhook signature', () => {
  const body = '{"tool":"lookup","input":{"id":1}}';

  it('is sha256=<hex HMAC of "<timestamp>.<body>">', () => {
    const expected = createHmac('sha256', 's3cret').update(`1700000000.${body}`).digest('hex');
    expect(signWebhookBody('s3cret', '1700000000', body)).toBe(`sha256=${expected}`);
  });

  it('verifies fresh, matching signatures only', () => {
    const nowMs = 1_700_000_100_000;
    const timestamp = '1700000000';
    const signature = signWebhookBody('s3cret', timestamp, body);
    expect(verifyWebhookSignature({ secret: 's3cret', body, timestamp, signature, nowMs })).toBe(true);
    expect(verifyWebhookSignature({ secret: 'other', body, timestamp, signature, nowMs })).toBe(false);
    expect(verifyWebhookSignature({ secret: 's3cret', body: `${body} `, timestamp, signature, nowMs })).toBe(false);
    expect(verifyWebhookSignature({ secret: 's3cret', body, timestamp: '1700000001', signature, nowMs })).toBe(false);
    expect(verifyWebhookSignature({ secret: 's3cret', body, timestamp, signature, nowMs: nowMs + 600_000 })).toBe(false);
    expect(verifyWebhookSignature({ secret: 's3cret', body, timestamp, signature: undefined, nowMs })).toBe(false);
  });
});
