import { CodeModeClient } from '@codemode/client';

/**
 * A flooding tenant in its own process (so its client work does not slow the measuring client):
 * keeps LANES exec calls going until told to stop, then reports what it did. `polite` lanes wait
 * out `Retry-After` after a 429, as a well-behaved client does; `greedy` ones retry at once.
 * Run by bench/fairness.ts with `fork`; argv: baseUrl apiKey code lanes polite|greedy.
 */
async function main(): Promise<void> {
  const [baseUrl, apiKey, code, lanesRaw, manner] = process.argv.slice(2);
  const client = new CodeModeClient({ baseUrl, apiKey });
  const counts = { done: 0, refused: 0 };
  let stop = false;
  process.on('message', () => (stop = true));
  const lane = async (): Promise<void> => {
    while (!stop) {
      const answer = await client.raw('POST', '/v1/sessions/f/exec', {
        body: JSON.stringify({ title: 'flood', code }),
        headers: { 'content-type': 'application/json' },
      });
      if (answer.status !== 429) {
        counts.done += 1;
        continue;
      }
      counts.refused += 1;
      if (manner === 'polite') await new Promise((r) => setTimeout(r, Number(answer.headers.get('retry-after') ?? 1) * 1000));
    }
  };
  process.send?.('started');
  await Promise.all(Array.from({ length: Number(lanesRaw) }, lane));
  process.send?.(counts);
}

void main();
