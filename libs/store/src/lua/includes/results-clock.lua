--[[
  Redis server time in milliseconds, and the purge of expired results references.
  Expiry is judged by the Redis clock alone, the same clock that expires the item keys
  (SET ... PXAT), so the index and the items never disagree about what is alive: a reference
  scored `expiresAt` is alive while now <= expiresAt, as Redis keeps a key until now > PXAT.
]]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Drops expired ids from the index and the sizes hash, so they stop counting at once.
-- Their item keys are already gone (or go within the same millisecond) by their own PXAT.
local function purge_expired(index, sizes, now)
  local expired = redis.call('ZRANGEBYSCORE', index, '-inf', '(' .. now)
  for _, id in ipairs(expired) do
    redis.call('ZREM', index, id)
    redis.call('HDEL', sizes, id)
  end
end
