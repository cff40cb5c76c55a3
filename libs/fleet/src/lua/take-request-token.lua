--[[
  One request of a tenant against its rate (SPEC §10): a token bucket refilled at RATE tokens a
  second up to BURST, on the Redis clock so every API replica shares one bucket.

    Input:
      KEYS[1] the tenant's bucket (hash: tokens, at)

      ARGV[1] rate (tokens per second)
      ARGV[2] burst (bucket size)

    Output:
      {1, 0}          taken
      {0, retryMs}    refused; a token is back in retryMs

    Events:
      none
]]
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local st = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(st[1]) or burst
local at = tonumber(st[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local ttl = math.ceil(burst * 1000 / rate) + 1000
if tokens < 1 then
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
  redis.call('PEXPIRE', KEYS[1], ttl)
  return { 0, math.ceil((1 - tokens) * 1000 / rate) }
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - 1), 'at', now)
redis.call('PEXPIRE', KEYS[1], ttl)
return { 1, 0 }
