--[[
  Keep one results reference (`results.save`, or an oversized final value): purge expired
  references, then admit the new one only if the session stays within its reference count and
  its shared bytes. A full store declines; it never evicts.

    Input:
      KEYS[1] results index   <p>:{t:sid}:results:index  (zset id → expiresAt ms)
      KEYS[2] results sizes   <p>:{t:sid}:results:sizes  (hash id → bytes)
      KEYS[3] the new item    <p>:{t:sid}:results:item:<id>

      ARGV[1] id
      ARGV[2] value: JSON text, kept verbatim
      ARGV[3] time to live, ms
      ARGV[4] most live references per session
      ARGV[5] most bytes all live references may share

    Output:
      {1, expiresAt}                          saved; expiresAt in Redis ms
      {0, 'count'|'bytes', references, used}  declined: full; nothing written
]]
--- @include "includes/results-clock"

local id, json, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local maxCount, maxBytes = tonumber(ARGV[4]), tonumber(ARGV[5])

local now = now_ms()
purge_expired(KEYS[1], KEYS[2], now)

local count = redis.call('ZCARD', KEYS[1])
local used = 0
for _, b in ipairs(redis.call('HVALS', KEYS[2])) do used = used + tonumber(b) end
-- Lua # counts bytes: the same UTF-8 byte count the caller measured.
local bytes = #json
if count >= maxCount then return { 0, 'count', count, used } end
if used + bytes > maxBytes then return { 0, 'bytes', count, used } end

local expiresAt = now + ttl
redis.call('SET', KEYS[3], json, 'PXAT', expiresAt)
redis.call('ZADD', KEYS[1], expiresAt, id)
redis.call('HSET', KEYS[2], id, bytes)
-- The bookkeeping keys live as long as their longest-lived reference, so an idle session
-- leaves nothing behind.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
redis.call('PEXPIREAT', KEYS[2], last[2])
return { 1, tostring(expiresAt) }
