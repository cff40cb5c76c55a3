--[[
  Replace the session's client tools (creating the session if missing) and append
  `tools.registered` in the same step. The event carries names and count only: endpoints and
  schemas live in the projection key, never in the log. The list (up to 16 MiB) never passes
  through Lua: the caller SETs it under a staged key just before, and this script renames that
  into place (copying 11 MB into and out of Lua held Redis ~30 ms per registration).

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash (unused: run ''), KEYS[4] transcript,
      KEYS[5] runs index, KEYS[6] client tools key, KEYS[7] the staged list (JSON array text)

      ARGV[1] event data: JSON object text {tools: [names], count} (verbatim)
      ARGV[2] the new list's version (opaque), kept as the session's `toolsVersion`
      ARGV[3] optional: the version of the list the caller merged into ('' for none stored);
              when given and the stored list has changed since, nothing is written

    Output:
      {1, eventId}
      {0} the stored list is not the one ARGV[3] names (declined)
      error when the staged list is missing (it expired, or its SET failed): nothing written

    Events:
      tools.registered
]]
--- @include "includes/append"

-- An agent key's registration is merged into the stored list (SPEC §11): it is written only over
-- the list it was merged into, so an operator's concurrent change is never overwritten.
if ARGV[3] then
  local current = redis.call('HGET', KEYS[2], 'toolsVersion')
  if not current then
    -- A list stored before versions were kept: its version is its SHA-1 (ClientToolsLedger.read).
    local stored = redis.call('GET', KEYS[6])
    current = stored and redis.sha1hex(stored) or ''
  end
  if current ~= ARGV[3] then
    redis.call('DEL', KEYS[7])
    return { 0 }
  end
end
if redis.call('EXISTS', KEYS[7]) == 0 then
  return redis.error_reply('the staged client tool list is missing; register the tools again')
end

local id = append_event(KEYS, { type = 'tools.registered', runId = '', epoch = 0, head = ARGV[1], raws = {},
  facts = {}, tools = { staged = KEYS[7], version = ARGV[2] } })
return { 1, id }
