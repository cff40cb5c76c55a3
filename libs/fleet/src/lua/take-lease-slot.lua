--[[
  Takes (or renews) a leased slot of one tenant's quota: in-flight exec/wait calls, event
  streams, running shell sessions. The slots are a sorted set of holders scored by when their
  lease ends (Redis clock, ms). Lapsed leases are dropped first, so a process that died with a
  slot frees it once its lease ends: no count can stay stuck.

    Input:
      KEYS[1] the quota's sorted set

      ARGV[1] holder id
      ARGV[2] lease length (ms)
      ARGV[3] the quota: most holders at once

    Output:
      {1, count}  taken, or renewed (a holder already in the set keeps its slot); count includes it
      {0, count}  refused: the quota is full

    Events:
      none
]]
local holder, leaseMs, quota = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local count = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], holder) == false then
  if count >= quota then return { 0, count } end
  count = count + 1
end
redis.call('ZADD', KEYS[1], now + leaseMs, holder)
-- The set lives as long as its longest lease.
if redis.call('PTTL', KEYS[1]) < leaseMs then redis.call('PEXPIRE', KEYS[1], leaseMs) end
return { 1, count }
