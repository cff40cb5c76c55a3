--[[
  Admits a run that is parking into its tenant's parked-run quota (SPEC §10): at most N parked
  runs and at most B bytes of their images. Members are scored by the run's parked expiry, so a
  run nobody released (its worker died) stops counting once it would have expired anyway. A run
  parking again keeps its place and has its size and expiry updated.

    Input:
      KEYS[1] the tenant's parked runs (sorted set: runId → expiry, ms)
      KEYS[2] the tenant's parked bytes (hash: runId → bytes)

      ARGV[1] runId
      ARGV[2] its expiry (ms since epoch)
      ARGV[3] its image bytes
      ARGV[4] most parked runs
      ARGV[5] most parked bytes
      ARGV[6] now (ms since epoch, the caller's clock: expiries are the caller's too)

    Output:
      {1, runs}    admitted
      {0, runs}    refused: too many parked runs
      {-1, bytes}  refused: the bytes would exceed the quota (the bytes it would make)

    Events:
      none
]]
local runId, expiresAt, bytes = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local maxRuns, maxBytes, now = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #lapsed > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  redis.call('HDEL', KEYS[2], unpack(lapsed))
end
local runs = redis.call('ZCARD', KEYS[1])
local present = redis.call('ZSCORE', KEYS[1], runId) ~= false
if not present and runs >= maxRuns then return { 0, runs } end
local total = bytes
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  if all[i] ~= runId then total = total + tonumber(all[i + 1]) end
end
if total > maxBytes then return { -1, total } end
redis.call('ZADD', KEYS[1], expiresAt, runId)
redis.call('HSET', KEYS[2], runId, bytes)
local keep = math.max(expiresAt - now, 1000)
if redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
  redis.call('PEXPIRE', KEYS[2], keep)
end
if present then return { 1, runs } end
return { 1, runs + 1 }
