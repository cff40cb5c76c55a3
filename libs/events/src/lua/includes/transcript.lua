--[[
  The session's transcript list (K[4]): one element per transcript entry (an input or a result of
  a cell), in log order. An element is a mark, `<kind><call><id>`: kind `i` (input) or `r`
  (result), call `e` (exec) or `w` (wait), and the stream id of the event the entry is built from
  (libs/events/src/runs/transcript-reader.ts), so the entry's text is kept once, in its event.
  The call is decided here, where the run hash still knows it: a result belongs to `wait` once the
  run was resumed, even after retention cut the `run.resumed` away. Lists written by earlier
  releases hold whole JSON entries (they start with `{`); both kinds may sit in one list, in
  append order, and retention trims both (retention.lua).

    transcript_mark(kind, call, id): the mark of one entry of the event `id`.
    push_transcript(K, mark): appends it and counts its stored bytes; a new list needs its TTL.
]]
--- @include "session-expiry"
--- @include "stored-bytes"

local MARK_KIND = { input = 'i', result = 'r' }
local MARK_CALL = { exec = 'e', wait = 'w' }

local function transcript_mark(kind, call, id)
  return MARK_KIND[kind] .. MARK_CALL[call] .. id
end

-- Appends a transcript mark; a new list (the first entry, or the first after a trim emptied it) needs its TTL.
local function push_transcript(K, mark)
  if redis.call('RPUSH', K[4], mark) == 1 then created_key = true end
  count_stored(#mark + LIST_OVERHEAD)
end
