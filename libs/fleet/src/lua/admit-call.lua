--[[
  Admits a request of a tenant against its quotas (SPEC §10) in one round trip: TOKENS of its
  request rate, and for an `exec` or `wait` call its in-flight slot too, both in the tenant's slot.
  The rate is a token bucket refilled at RATE tokens a second up to BURST, on the Redis clock so
  every API replica shares one bucket; the tokens are taken together or none (the messages of one
  JSON-RPC batch, SPEC §14). The in-flight slots are leases as in take-lease-slot.lua: lapsed ones
  are dropped before counting, so a process that died with a slot frees it once its lease ends.
  The rate is decided first, as the rate guard did before the call: refused at its rate a call
  takes no slot and no token; refused at the in-flight quota it has spent its tokens, as any
  refused request has (the rate counts requests, so a client flooding calls at its in-flight
  quota meets its rate).

    Input:
      KEYS[1] the tenant's request bucket (hash: tokens, at)
      KEYS[2] the tenant's in-flight slots (sorted set: holder → lease end, Redis clock ms)

      ARGV[1] rate (tokens per second)
      ARGV[2] burst (bucket size)
      ARGV[3] tokens to take (0: none; the request took its own, or the rate is unlimited)
      ARGV[4] holder id ('': no slot; not a call, or the in-flight quota is unlimited)
      ARGV[5] lease length (ms)
      ARGV[6] the in-flight quota: most holders at once

    Output:
      {1, count}     admitted; count is the tenant's holders with this one (0 when no slot)
      {0, retryMs}   refused at the rate; the tokens are back in retryMs
      {-1, count}    refused at the in-flight quota (count holders); the tokens are spent

    Events:
      none
]]
local rate, burst, asked = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local holder, leaseMs, quota = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- The bucket, refilled to now: the tokens taken, or none if short.
if asked > 0 then
  local st = redis.call('HMGET', KEYS[1], 'tokens', 'at')
  local at = tonumber(st[2]) or now
  local tokens = math.min(burst, (tonumber(st[1]) or burst) + math.max(0, now - at) * rate / 1000)
  local short = tokens < asked
  if not short then tokens = tokens - asked end
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
  if short then return { 0, math.ceil((asked - tokens) * 1000 / rate) } end
end

if holder == '' then return { 1, 0 } end
-- Lapsed leases first: a process that died with a slot has freed it once its lease ended.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local count = redis.call('ZCARD', KEYS[2])
if count >= quota then return { -1, count } end
redis.call('ZADD', KEYS[2], now + leaseMs, holder)
-- The set lives as long as its longest lease.
if redis.call('PTTL', KEYS[2]) < leaseMs then redis.call('PEXPIRE', KEYS[2], leaseMs) end
return { 1, count + 1 }
