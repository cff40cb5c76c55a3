--[[
  Replace the session's skills (`PUT /v1/sessions/{sid}/skills`, SPEC §15; creating the session if
  missing) and append `skills.registered` in the same step. The event carries names and count
  only: descriptions and contents live in the projection keys. The set (up to 16 MiB) never passes
  through Lua: the caller HSETs it into two staged hashes just before, and this script renames them
  into place (see register-tools.lua for why).

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash (unused: run ''), KEYS[4] transcript,
      KEYS[5] runs index, KEYS[6] skill descriptions <p>:{t:sid}:skills,
      KEYS[7] skill contents <p>:{t:sid}:skill-docs, KEYS[8] staged descriptions,
      KEYS[9] staged contents

      ARGV[1] event data: JSON object text {skills: [names], count} (verbatim)
      ARGV[2] the new set's count (0: the session's skills are removed; nothing is staged)
      ARGV[3] the new set's stored bytes (names, descriptions and contents), for storedBytes

    Output:
      {1, eventId}
      error when a staged hash is missing (it expired, or its write failed): nothing written

    Events:
      skills.registered
]]
--- @include "includes/append"

if tonumber(ARGV[2]) > 0 and (redis.call('EXISTS', KEYS[8]) == 0 or redis.call('EXISTS', KEYS[9]) == 0) then
  return redis.error_reply('the staged skills are missing; register the skills again')
end

local id = append_event(KEYS, { type = 'skills.registered', runId = '', epoch = 0, head = ARGV[1], raws = {},
  facts = {}, skills = { count = tonumber(ARGV[2]), bytes = tonumber(ARGV[3]), descriptions = KEYS[8], docs = KEYS[9] } })
return { 1, id }
