import { ConfigError } from './errors';
import { readRedisSettings, redisAddress } from './redis-settings';

describe('readRedisSettings', () => {
  it('defaults to one local Redis and 16 queue shards', () => {
    expect(readRedisSettings({})).toEqual({
      url: 'redis://127.0.0.1:6379',
      clusterNodes: null,
      username: undefined,
      password: undefined,
      queueShards: 16,
      cellDispatch: 'stream',
    });
  });

  it('dispatches new cells on the shard streams unless CODEMODE_CELL_DISPATCH says bullmq', () => {
    expect(readRedisSettings({ CODEMODE_CELL_DISPATCH: 'bullmq' }).cellDispatch).toBe('bullmq');
    expect(readRedisSettings({ CODEMODE_CELL_DISPATCH: ' ' }).cellDispatch).toBe('stream');
    expect(() => readRedisSettings({ CODEMODE_CELL_DISPATCH: 'kafka' })).toThrow(
      /CODEMODE_CELL_DISPATCH must be one of bullmq, stream, got "kafka"/,
    );
  });

  it('reads cluster seeds as host:port or redis:// URLs, with the URLs credentials', () => {
    const settings = readRedisSettings({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis://app:s%40cret@node-2:7001,node-3' });
    expect(settings.clusterNodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'node-2', port: 7001 },
      { host: 'node-3', port: 6379 },
    ]);
    expect(settings.username).toBe('app');
    expect(settings.password).toBe('s@cret');
  });

  it('lets REDIS_USERNAME / REDIS_PASSWORD apply to every node', () => {
    const settings = readRedisSettings({ REDIS_CLUSTER_NODES: 'redis://a:b@h:1', REDIS_USERNAME: 'svc', REDIS_PASSWORD: 'pw' });
    expect([settings.username, settings.password]).toEqual(['svc', 'pw']);
  });

  it('names the variable of a malformed seed or shard count', () => {
    expect(() => readRedisSettings({ REDIS_CLUSTER_NODES: 'h:99999' })).toThrow(ConfigError);
    expect(() => readRedisSettings({ REDIS_CLUSTER_NODES: 'h:99999' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => readRedisSettings({ CODEMODE_QUEUE_SHARDS: '0' })).toThrow(/CODEMODE_QUEUE_SHARDS must be an integer from 1 to 1024/);
  });

  it('says where Redis is without the credentials of its URLs', () => {
    expect(redisAddress(readRedisSettings({ REDIS_URL: 'redis://user:pw-secret@redis.internal:6380/2' }))).toBe('redis.internal:6380');
    expect(redisAddress(readRedisSettings({}))).toBe('127.0.0.1:6379');
    expect(redisAddress(readRedisSettings({ REDIS_CLUSTER_NODES: 'redis://a:pw-secret@h1:7000,h2' }))).toBe('cluster h1:7000,h2:6379');
  });
});
