--[[
  What one session keeps in Redis (SPEC §10 "Redis storage"), for its tenant's total: the
  session's `storedBytes` (kept by the append path, see includes/stored-bytes.lua) plus its live results
  references, and how long the session has left. With ARGV[1] = '1', first applies retention to
  the session now (the trim an append would make), so a tenant refused at its quota gets back
  what retention frees without writing.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash (unused: run ''), KEYS[4] transcript,
      KEYS[5] runs index, KEYS[6] results sizes <p>:{t:sid}:results:sizes

      ARGV[1] '1' to trim first, '' not to

    Output:
      {bytes, pttl}  pttl of the session hash in ms; {0, -2} when the session is gone

    Events:
      none
]]
--- @include "includes/retention"

if redis.call('EXISTS', KEYS[2]) == 0 then return { 0, -2 } end
if ARGV[1] == '1' then
  local t = redis.call('TIME')
  trim_session(KEYS, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  flush_stored(KEYS)
end
local bytes = tonumber(redis.call('HGET', KEYS[2], 'storedBytes') or '0')
for _, size in ipairs(redis.call('HVALS', KEYS[6])) do bytes = bytes + tonumber(size) end
return { bytes, redis.call('PTTL', KEYS[2]) }
