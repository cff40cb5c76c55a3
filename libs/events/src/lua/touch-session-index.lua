--[[
  Records a session's activity in its tenant's sessions index (SessionIndex.touch): the score only
  moves forward (GT), the index lives as long as a session can, and members older than that are
  dropped when asked. One script rather than plain commands, so the index never exists without
  its TTL (SPEC §10: no key lives forever); it still leaves in the same socket write as the
  command it goes alongside (auto-pipelining), where a MULTI would be written on its own.

    Input:
      KEYS[1] the tenant's sessions index  <p>:sessions:{<tenant>}

      ARGV[1] session id
      ARGV[2] ms of the activity
      ARGV[3] the index's life in ms (and the age past which members are dropped)
      ARGV[4] '1' to drop the members older than that, '' not to

    Output:
      1

    Events:
      none
]]
local at, life = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] == '1' then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', at - life))
end
return 1
