import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Lowest port handed out: above Redis's 6379, the cluster's 7101-7106 and their bus ports (17101-17106). */
const LOWEST = 20_000;

/**
 * A TCP port that was free a moment ago on loopback, for a process the test starts next.
 *
 * Chosen at random below the kernel's ephemeral range (ip_local_port_range), not with `listen(0)`:
 * a port from that range, once closed here, can be taken by any outgoing connection (the suite
 * opens thousands to Redis) before the process binds it, which then exits at start with
 * EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralStart();
  if (below - LOWEST < 1_000) return bindable(0);
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    const free = await bindable(port).then(
      () => true,
      () => false,
    );
    if (free) return port;
  }
  return bindable(0);
}

function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return Number(low) || 32_768;
  } catch {
    return 32_768;
  }
}

/** Binds `port` on loopback (0: any), closes it again, and resolves the port bound. */
function bindable(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}
