--[[
  One tenant's stored bytes (SPEC §10 "Redis storage"), fleet-wide, in the tenant's slot: the
  last measure of each of its sessions (measure-session.lua, reported after writes: the sessions
  of one tenant measured together are reported in one call), when that session's keys expire, and
  their total. A session whose keys expired without a report since is dropped here at its expiry
  (at most PURGE_BATCH per call), its bytes with it, because expiring keys cannot give their bytes
  back themselves.

    Input:
      KEYS[1] bytes per session   <p>:quota:{<tenant>}:stored-bytes  (zset session id → bytes)
      KEYS[2] expiry per session  <p>:quota:{<tenant>}:stored-until  (zset session id → Redis ms)
      KEYS[3] the total           <p>:quota:{<tenant>}:stored-total  (string)

      ARGV[1] 'check' (purge, answer the total) | 'report' | 'forget'
      ARGV[2] check: how many of the largest sessions to answer (0 for none)
      ARGV[3..] report: per session, its id, its bytes and its pttl in ms (negative: the session
                is gone, forget it); forget: the session id

    Output:
      {total, sid1, sid2, ...}  the tenant's total after the call; with ARGV[2], the largest sessions

    Events:
      none
]]
local PURGE_BATCH = 100
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local total = tonumber(redis.call('GET', KEYS[3]) or '0')

local function drop(sid)
  local held = tonumber(redis.call('ZSCORE', KEYS[1], sid) or '0')
  total = total - held
  redis.call('ZREM', KEYS[1], sid)
  redis.call('ZREM', KEYS[2], sid)
end

for _, sid in ipairs(redis.call('ZRANGE', KEYS[2], '-inf', now, 'BYSCORE', 'LIMIT', 0, PURGE_BATCH)) do
  drop(sid)
end

local mode = ARGV[1]
if mode == 'forget' then
  drop(ARGV[3])
elseif mode == 'report' then
  for i = 3, #ARGV, 3 do
    local sid, bytes, pttl = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
    if pttl < 0 then
      drop(sid)
    else
      total = total + bytes - tonumber(redis.call('ZSCORE', KEYS[1], sid) or '0')
      redis.call('ZADD', KEYS[1], bytes, sid)
      redis.call('ZADD', KEYS[2], now + pttl, sid)
    end
  end
end

-- The three keys live as long as the longest-lived session they count (no key lives forever).
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if #last == 0 then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
  total = 0
else
  if total < 0 then total = 0 end
  redis.call('SET', KEYS[3], string.format('%d', total), 'PXAT', last[2])
  redis.call('PEXPIREAT', KEYS[1], last[2])
  redis.call('PEXPIREAT', KEYS[2], last[2])
end

local out = { total }
local n = tonumber(ARGV[2])
if n > 0 then
  for _, s in ipairs(redis.call('ZRANGE', KEYS[1], '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, n)) do out[#out + 1] = s end
end
return out
