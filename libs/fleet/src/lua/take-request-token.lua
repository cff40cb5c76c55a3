--[[
  Requests of a tenant against its rate (SPEC §10): a token bucket refilled at RATE tokens a
  second up to BURST, on the Redis clock so every API replica shares one bucket. COUNT tokens are
  taken together or none (the messages of one JSON-RPC batch, SPEC §14).

    Input:
      KEYS[1] the tenant's bucket (hash: tokens, at)

      ARGV[1] rate (tokens per second)
      ARGV[2] burst (bucket size)
      ARGV[3] count (tokens to take; 1 when absent)

    Output:
      {1, 0}          taken
      {0, retryMs}    refused; COUNT tokens are back in retryMs

    Events:
      none
]]
local rate, burst, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]) or 1
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local st = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(st[1]) or burst
local at = tonumber(st[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local ttl = math.ceil(burst * 1000 / rate) + 1000
if tokens < count then
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
  redis.call('PEXPIRE', KEYS[1], ttl)
  return { 0, math.ceil((count - tokens) * 1000 / rate) }
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - count), 'at', now)
redis.call('PEXPIRE', KEYS[1], ttl)
return { 1, 0 }
