--[[
  Keeps a node's connection marked live, if it is still the connection that holds the node (a
  reconnect elsewhere or DELETE /v1/nodes/{id} ends the hold: the holder then closes its stream).

    Input:
      KEYS[1] the tenant's nodes (hash: nodeId → record JSON)
      KEYS[2] the node's connection (string: token)

      ARGV[1] nodeId
      ARGV[2] the connection's token
      ARGV[3] connection lease (ms)
      ARGV[4] now (ISO 8601)

    Output:
      1  still held, lease renewed
      0  no longer held

    Events:
      none
]]
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw or redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
local record = cjson.decode(raw)
record.lastSeenAt = ARGV[4]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
return 1
