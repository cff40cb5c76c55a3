import { ConfigError, loadConfig } from '@codemode/config';
import { KeySpace, TenantToolsLedger, createRedis, waitUntilReady } from '@codemode/events';
import { HeaderVault } from '@codemode/tools';
import { rotateTenantToolHeaders } from './header-rotation';

/**
 * `npm run secrets:rotate` (SPEC §18): after `CODEMODE_SECRETS_KEY` was changed (the old key in
 * `CODEMODE_SECRETS_KEY_PREVIOUS`), re-encrypts every stored tenant tool header under the new key,
 * so `_PREVIOUS` can be dropped. Reads the same environment as the API (Redis, key prefix).
 */
async function main(): Promise<number> {
  const config = loadConfig(process.env);
  if (config.secretsKeys === null) {
    process.stderr.write('secrets:rotate needs CODEMODE_SECRETS_KEY (the new key) and CODEMODE_SECRETS_KEY_PREVIOUS (the old one).\n');
    return 2;
  }
  const redis = createRedis(config.redis, { name: 'secrets-rotate' });
  try {
    await waitUntilReady(redis);
    const vault = new HeaderVault(config.secretsKeys.current, config.secretsKeys.previous);
    const report = await rotateTenantToolHeaders(new TenantToolsLedger(redis, new KeySpace(config.keyPrefix)), vault);
    process.stdout.write(
      `re-encrypted ${report.resealed} tool header sets under CODEMODE_SECRETS_KEY; ${report.current} were already; ` +
        `${report.raced} changed meanwhile (their new headers are under the new key).\n`,
    );
    if (report.unreadable.length === 0) return 0;
    process.stderr.write(
      `${report.unreadable.length} tool header sets neither key opens; register those tools' headers again: ${report.unreadable.join(', ')}\n`,
    );
    return 1;
  } finally {
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
