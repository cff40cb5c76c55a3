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
      ARGV[5] agents (SPEC §15): 'keep' | 'on' | 'off'
      ARGV[6] repairAttempts: '' keeps, 'null' removes, else a non-negative integer (SPEC §16)
      ARGV[7] notifyUrl mode: 'keep' | 'set' | 'clear' (SPEC §7)
      ARGV[8] notifyUrl (when mode is 'set'; checked by the caller)

    Output:
      {1, eventId, agentId|false, codeModeJson, shellJson, createdAt, updatedAt, agents '1'|'0',
       repairAttempts|false, notifyUrl|false}

    Events:
      session.configured
]]
--- @include "includes/append"

-- Patches hold only integers below 1e14, booleans and null (checked by the caller), so a cjson
-- round trip is exact here; user-written JSON never goes through this path.
local function merge(stored, patchJson)
  local merged = stored and cjson.decode(stored) or {}
  for k, v in pairs(cjson.decode(patchJson)) do
    if v == cjson.null then merged[k] = nil else merged[k] = v end
  end
  if next(merged) == nil then return '{}' end
  return cjson.encode(merged)
end

local cur = redis.call('HMGET', KEYS[2], 'agentId', 'codeMode', 'shell', 'agents', 'repairAttempts', 'notifyUrl')
local agentId = cur[1]
local agents = cur[4] == '1'
if ARGV[5] == 'on' then agents = true elseif ARGV[5] == 'off' then agents = false end
if ARGV[1] == 'set' then agentId = ARGV[2] elseif ARGV[1] == 'clear' then agentId = false end
local codeMode = merge(cur[2], ARGV[3])
local shell = merge(cur[3], ARGV[4])
local repairAttempts = cur[5]
if ARGV[6] == 'null' then repairAttempts = false elseif ARGV[6] ~= '' then repairAttempts = ARGV[6] end
local notifyUrl = cur[6]
if ARGV[7] == 'set' then notifyUrl = ARGV[8] elseif ARGV[7] == 'clear' then notifyUrl = false end

local head = '{"agentId":' .. (agentId and cjson.encode(agentId) or 'null') ..
  ',"codeMode":' .. codeMode .. ',"shell":' .. shell .. (agents and ',"agents":true' or '') ..
  (repairAttempts and (',"repairAttempts":' .. repairAttempts) or '') ..
  ',"notifyUrl":' .. (notifyUrl and cjson.encode(notifyUrl) or 'null') .. '}'
local facts = { codeMode = codeMode, shell = shell, agents = agents and '1' or '0' }
if agentId then facts.agentId = agentId end
if notifyUrl then facts.notifyUrl = notifyUrl end
local id = append_event(KEYS, { type = 'session.configured', runId = '', epoch = 0, head = head, raws = {}, facts = facts })
-- The session hash holds it beside the counter of failed cells that finish-run.lua keeps.
if repairAttempts then redis.call('HSET', KEYS[2], 'repairAttempts', repairAttempts)
else redis.call('HDEL', KEYS[2], 'repairAttempts') end
local times = redis.call('HMGET', KEYS[2], 'createdAt', 'updatedAt')
return { 1, id, agentId, codeMode, shell, times[1], times[2], facts.agents, repairAttempts, notifyUrl }
