/**
 * The largest event-loop delay of an app since the last scrape of its metrics (prom-client resets
 * its histogram on each scrape), in ms: scrape once before an attack, once after it.
 */
export async function eventLoopLagMaxMs(metricsUrl: string): Promise<number> {
  const text = await fetch(metricsUrl).then((r) => r.text());
  const match = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text);
  if (!match) throw new Error(`no nodejs_eventloop_lag_max_seconds at ${metricsUrl}`);
  return Number(match[1]) * 1000;
}
