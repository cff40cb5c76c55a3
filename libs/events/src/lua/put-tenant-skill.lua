--[[
  Store one of the tenant's skills (`PUT /v1/skills/{name}`, SPEC §15), refusing a new name once
  the tenant has MAX skills: the count is checked and the skill written in one step, so two
  concurrent PUTs of new names can never take the tenant past it. Replacing a skill the tenant
  has is always allowed. The description and content are stored verbatim (never decoded here).

    Input:
      KEYS[1] the tenant's skill descriptions <p>:skills:{t} (hash name → description)
      KEYS[2] the tenant's skill contents <p>:skill-docs:{t} (hash name → content)

      ARGV[1] skill name (checked by the caller)
      ARGV[2] description
      ARGV[3] content
      ARGV[4] MAX: most skills of a tenant

    Output:
      {1, count}  stored; count = the tenant's skills now
      {0, count}  refused: a new name and the tenant has MAX already

    Events:
      none (a tenant's skills are not session events)
]]
local count = redis.call('HLEN', KEYS[1])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  if count >= tonumber(ARGV[4]) then return { 0, count } end
  count = count + 1
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return { 1, count }
