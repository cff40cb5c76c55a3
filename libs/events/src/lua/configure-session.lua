--[[
  Merge a configuration patch into the session (creating it if missing) and append
  `session.configured` with the merged overrides. Per field: omitted keeps, null removes.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash (unused: run ''), KEYS[4] transcript,
      KEYS[5] runs index

      ARGV[1] agentId mode: 'keep' | 'set' | 'clear'
      ARGV[2] agentId (when mode is 'set')
      ARGV[3] codeMode patch: JSON object of integer | null (validated by the caller)
      ARGV[4] shell patch: JSON object of integer | boolean | null
      ARGV[5] notifyUrl mode: 'keep' | 'set' | 'clear'
      ARGV[6] notifyUrl (when mode is 'set'; checked by the caller)

    Output:
      {1, eventId, agentId|false, codeModeJson, shellJson, createdAt, updatedAt, notifyUrl|false}

    Events:
      session.configured
]]
--- @include "includes/append"

-- Patches hold only integers below 1e14, booleans and null (checked by the caller), so a cjson round trip
-- is exact here; user-written JSON never goes through this path.
local function merge(stored, patchJson)
  local merged = stored and cjson.decode(stored) or {}
  for k, v in pairs(cjson.decode(patchJson)) do
    if v == cjson.null then merged[k] = nil else merged[k] = v end
  end
  if next(merged) == nil then return '{}' end
  return cjson.encode(merged)
end

local cur = redis.call('HMGET', KEYS[2], 'agentId', 'codeMode', 'shell', 'notifyUrl')
local agentId = cur[1]
if ARGV[1] == 'set' then agentId = ARGV[2] elseif ARGV[1] == 'clear' then agentId = false end
local notifyUrl = cur[4]
if ARGV[5] == 'set' then notifyUrl = ARGV[6] elseif ARGV[5] == 'clear' then notifyUrl = false end
local codeMode = merge(cur[2], ARGV[3])
local shell = merge(cur[3], ARGV[4])

local head = '{"agentId":' .. (agentId and cjson.encode(agentId) or 'null') ..
  ',"codeMode":' .. codeMode .. ',"shell":' .. shell ..
  ',"notifyUrl":' .. (notifyUrl and cjson.encode(notifyUrl) or 'null') .. '}'
local facts = { codeMode = codeMode, shell = shell }
if agentId then facts.agentId = agentId end
if notifyUrl then facts.notifyUrl = notifyUrl end
local id = append_event(KEYS, { type = 'session.configured', runId = '', epoch = 0, head = head, raws = {}, facts = facts })
local times = redis.call('HMGET', KEYS[2], 'createdAt', 'updatedAt')
return { 1, id, agentId, codeMode, shell, times[1], times[2], notifyUrl }
