--[[
  The session's transcript list (K[4]): one JSON entry per input and result of a cell, in log
  order. Each entry starts {"kind":..,"call":..,"runId":..,"at":"<iso>" (transcript_entry), so the
  first "at" in it is its own: retention's trim_transcript reads it without decoding the entry.

    transcript_entry(kind, call, runId, at, field, json): the entry's text; `json` is spliced verbatim.
    push_transcript(K, entry): appends it and counts its stored bytes; a new list needs its TTL.
]]
--- @include "session-expiry"
--- @include "stored-bytes"

local function transcript_entry(kind, call, runId, at, field, json)
  local rid = runId == '' and 'null' or cjson.encode(runId)
  return '{"kind":"' .. kind .. '","call":"' .. call .. '","runId":' .. rid ..
    ',"at":"' .. at .. '","' .. field .. '":' .. json .. '}'
end

-- Appends a transcript entry; a new list (the first entry, or the first after a trim emptied it) needs its TTL.
local function push_transcript(K, entry)
  if redis.call('RPUSH', K[4], entry) == 1 then created_key = true end
  count_stored(#entry + LIST_OVERHEAD)
end
