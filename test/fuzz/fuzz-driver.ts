import type { FuzzAnswer } from './contract-shapes';
import type { FuzzRequest } from './rest-inputs';

/**
 * Sends one fuzz request within `budgetMs`. A live stream (events, an MCP GET, a node connection)
 * is closed once its headers are in: the fuzz checks that it was accepted, not what it carries.
 * Rejects with `hang past the budget` when nothing came back in time.
 */
export async function send(baseUrl: string, request: FuzzRequest, budgetMs: number): Promise<FuzzAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), budgetMs);
  try {
    const res = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
    });
    const contentType = res.headers.get('content-type') ?? '';
    const live = contentType.includes('text/event-stream') && !(request.path === '/mcp' && request.method === 'POST');
    if (live) {
      await res.body?.cancel();
      return { status: res.status, contentType, text: '' };
    }
    return { status: res.status, contentType, text: await res.text() };
  } catch (error) {
    if (controller.signal.aborted) throw new Error(`hang past the budget (${budgetMs} ms)`);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `work` over `items` in `lanes` concurrent lanes, in order of index within each lane. */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) {
        const index = next;
        next += 1;
        await work(items[index], index);
      }
    }),
  );
}
