--[[
  Delete one results reference (`results.delete`), freeing its count and bytes at once.

    Input:
      KEYS[1] results index   <p>:{t:sid}:results:index
      KEYS[2] results sizes   <p>:{t:sid}:results:sizes
      KEYS[3] the item        <p>:{t:sid}:results:item:<id>

      ARGV[1] id

    Output:
      {1}  deleted a live reference
      {0}  no live reference had that id (unknown, already deleted, or expired)
]]
--- @include "includes/results-clock"

purge_expired(KEYS[1], KEYS[2], now_ms())
local live = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
return { live }
