--[[
  A node's connection closed: the node is no longer connected, unless another connection holds it
  already (it reconnected elsewhere first).

    Input:
      KEYS[1] the tenant's nodes (hash: nodeId → record JSON)
      KEYS[2] the node's connection (string: token)

      ARGV[1] nodeId
      ARGV[2] the connection's token
      ARGV[3] now (ISO 8601)

    Output:
      1  marked disconnected
      0  held by another connection, or gone

    Events:
      none
]]
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[2])
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw then
  local record = cjson.decode(raw)
  record.lastSeenAt = ARGV[3]
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
end
return 1
