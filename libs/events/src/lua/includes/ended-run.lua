--[[
  A finished run's hash kept compact (COMPACT_RUNS): at its terminal event the fields only a view
  reads of it (and reserve-resume.lua's and finish-run.lua's answers for an ended run) go into
  one field, `ended` (run-hash.lua, pack_ended); `status`, `epoch`, `title` and whatever else the
  hash holds stay as they are, so every script that decides by them reads them as before. One
  field instead of seven: ~96 B less per finished run, most of it the field names and their
  listpack entries (views.ts reads it back; ended-run fields there):

    ended = createdAt ',' startedAt ',' endedAt ',' resultEvent ',' flags [',' owner]
      createdAt     milliseconds since 1970, in base 36 (8 digits where decimal takes 13)
      startedAt, endedAt  milliseconds after createdAt ('' when the hash had none)
      resultEvent   '' for none; '-<seq>' when its millisecond is endedAt's (the terminal event's
                    id, as append.lua writes it); else the whole id
      flags         'r' replaySafe true, 'u' replaySafe false, 's' restartSafe true
      owner         the rest of the value (a worker id may hold a comma); when it would take the
                    value past PACKED_MAX, `owner` stays a field of its own and there is no ','

  A hash whose fields are not in the shapes this release writes (times as ISO strings, an
  earlier release's `restartSafe` 'false') is left as it is, and so is one whose value would be
  longer than PACKED_MAX: Redis keeps a hash in its small encoding (listpack) only while every
  value is at most `hash-max-listpack-value` (64 B by default), and a hash out of it costs more.

    packed_ended(v): the value for the fields in table `v` (absent ones nil), or nil when they
      are not in the shapes above; the second result is true when the owner is in it.
    unpack_ended(value): those fields as a table (absent ones nil).
    read_run_fields(key, fields): HMGET of `fields` on a run hash, each absent one read from its
      `ended` (a field of its own goes first, as in views.ts and read-run.lua); absent: false. A
      folded run's fields are read from its record (run-record.lua, run_fields).
    base36(n): a whole number of 0 or more in base 36.
    id_offset(after, seq): a log entry's id `after` ms past another, as a record's heads
      (run-record.lua) and a run's list of its entries (run-entries.lua) write it: `after` in base
      36, then `-` and `seq` in base 36 when not 0.
]]
--- @include "session-keys"
--- @include "run-record"

local ENDED_FIELDS = { 'createdAt', 'startedAt', 'endedAt', 'resultEvent', 'replaySafe', 'restartSafe', 'owner' }
local PACKED_MAX = 64
local REPLAY_FLAGS = { ['true'] = 'r', ['false'] = 'u' }
-- Each digit's character by its value: base36 looks it up instead of cutting it from a string.
local BASE36_DIGITS = (function()
  local digits = {}
  for d = 0, 35 do digits[d] = string.sub('0123456789abcdefghijklmnopqrstuvwxyz', d + 1, d + 1) end
  return digits
end)()

local function base36(n)
  -- A negative or fractional n would never reach 0 below, and a script that has written cannot be
  -- killed: an error at least ends it. Every caller passes a whole number of 0 or more.
  if n < 0 or n ~= math.floor(n) then error('base36 of ' .. tostring(n)) end
  local digits, i = {}, 0
  repeat
    local d = n % 36
    i = i + 1
    digits[i] = BASE36_DIGITS[d]
    n = (n - d) / 36
  until n == 0
  return string.reverse(table.concat(digits))
end

local function id_offset(after, seq)
  return base36(after) .. (seq == 0 and '' or '-' .. base36(seq))
end

local function packed_ended(v)
  local created = v.createdAt
  if not (created and string.match(created, '^%d+$')) then return nil end
  local function after(t)
    if not t then return '' end
    if not string.match(t, '^%d+$') then return nil end
    return int(tonumber(t) - tonumber(created))
  end
  local started, ended = after(v.startedAt), after(v.endedAt)
  if not (started and ended) then return nil end
  local replay = v.replaySafe == nil and '' or REPLAY_FLAGS[v.replaySafe]
  if not replay or (v.restartSafe and v.restartSafe ~= 'true') then return nil end
  local result = v.resultEvent or ''
  local ms, seq = string.match(result, '^(%d+)%-(%d+)$')
  if ms and ms == v.endedAt then result = '-' .. seq end
  local packed = base36(tonumber(created)) .. ',' .. started .. ',' .. ended .. ',' .. result .. ',' .. replay .. (v.restartSafe and 's' or '')
  if v.owner and #packed + 1 + #v.owner <= PACKED_MAX then return packed .. ',' .. v.owner, true end
  if #packed > PACKED_MAX then return nil end
  return packed, false
end

local function unpack_ended(value)
  local created, started, ended, result, flags, rest =
    string.match(value, '^(%w+),(%-?%d*),(%-?%d*),([^,]*),([rus]*)(.*)$')
  local c = tonumber(created, 36)
  local v = { createdAt = int(c) }
  if started ~= '' then v.startedAt = int(c + tonumber(started)) end
  if ended ~= '' then v.endedAt = int(c + tonumber(ended)) end
  if string.sub(result, 1, 1) == '-' then v.resultEvent = v.endedAt .. result
  elseif result ~= '' then v.resultEvent = result end
  if string.find(flags, 'r', 1, true) then v.replaySafe = 'true' elseif string.find(flags, 'u', 1, true) then v.replaySafe = 'false' end
  if string.find(flags, 's', 1, true) then v.restartSafe = 'true' end
  if rest ~= '' then v.owner = string.sub(rest, 2) end
  return v
end

local function read_run_fields(key, fields)
  local values = run_fields(key, { 'ended', unpack(fields) })
  local ended = values[1] and unpack_ended(values[1]) or {}
  local read = {}
  for i, field in ipairs(fields) do read[i] = values[i + 1] or ended[field] or false end
  return read
end
