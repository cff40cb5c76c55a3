--[[
  A finished run as one record (SPEC §13 "A finished run is compact"; COMPACT_RUNS). At its
  terminal event the run's hash and its stream entries become one value of the session's hash of
  past runs (`<base>:past`, field past_field(runId) → record), and no other copy is kept: the hash
  is deleted and the entries leave the stream (XDEL: their ids stay taken, the stream's last id
  does not move back, and nothing else is ever written under them). Every reader answers from the
  record what it answered from the hash and the entries: read-run.lua (run views, waits, owed
  answers), run_fields (every script that asks a run's status), read-events-page.lua (the event
  feed, its cursors, history), read-log-events.lua (an event by its id) and retention.lua.

  A record holds the run's whole life only when that life was short and small: its end at most
  SPAN_MS after its request, its entries all found (by the ids its hash lists, run-entries.lua;
  for a run without a list to rely on, among at most FOLD_SCAN_MAX entries of the log between the
  two, which a fold reads all), and at most RECORD_MAX_DATA bytes of data in its entries. The feed finds
  a folded run's events through the runs index (every event of a run has an id at or after its
  request, whose millisecond is the run's score there): a page after a cursor looks at the runs
  requested from SPAN_MS before it on. A longer run (parked, held for an approval), a run whose
  entries are not in the shape this release writes, and one with a value holding SEP, keep their
  entries in the log: their record is the hash's fields alone (kind 'B'). A record is a hash
  field's value (~0.1 KB less than a key of its own) and kept short: a value of at most 188 bytes
  takes the allocator's 192-byte class, one of 189 its 224.

    record  = kind field SEP field... SEP '' [SEP head SEP data]...     tokens joined by SEP
      kind  'A' the run's entries are in the record, 'B' they are in the log
      field a hash field (the hash as HGETALL read it, in its order): `S` and one letter for an
            ended status (c completed, f failed, x expired, l lost); one code letter and the value
            for status, epoch, title and ended (s, e, t, n); else '=' name '=' value
      head  '<ms>[-<seq>]:<type><epoch>' of one entry, oldest first: `ms` in base 36 after the
            one before it (the first after the run's createdAt), `seq` in base 36 when not 0;
            `type` the entry's one-letter code (entry-codes.lua)
      data  the entry's data value as the log kept it
    SEP (\31) is in no JSON text (a control character is escaped in a string and is no
    whitespace), in no id and in no type code.

    past_field(runId): the field of the run's record: a `cm_<uuid>` id as its 16 bytes, which the
      allocator keeps in 32 bytes where the 39 characters take 48 (run-record.ts has its twin).
    record_of(runKey): the record of the run whose hash is `runKey` (`<base>:run:<runId>`), false
      when there is none or retention has passed it (RETENTION_MS after its end, when its hash's TTL
      would have ended it).
    record_fields(record): the hash's fields, as HGETALL answers them.
    record_entries(record, runId): the entries, as XRANGE answers them ({} for kind 'B').
    record_end_ms(record): the millisecond of the run's end.
    run_fields(runKey, fields): HMGET of `fields` on the run hash, or from its record once it is
      folded (false for each field it does not hold).
    run_exists(runKey): the run has a hash or a record.
]]
--- @include "settings"
--- @include "session-keys"

local SEP = '\31'
-- A folded run's events are found by its request, at most SPAN_MS before the first event read.
local SPAN_MS = math.min(10000, math.floor(RETENTION_MS / 4))
local FOLD_SCAN_MAX = 64
local FOLD_SCAN_BATCH = 16
-- A record's entries hold at most this much data: a reader of the feed reads whole records, so a
-- run with more (a large cell, a large result) keeps its entries in the log, read a page at a time.
local RECORD_MAX_DATA = 16384
local FIELD_CODES = { status = 's', epoch = 'e', title = 't', ended = 'n' }
local CODE_FIELDS = { s = 'status', e = 'epoch', t = 'title', n = 'ended' }
local STATUS_CODES = { completed = 'c', failed = 'f', expired = 'x', lost = 'l' }
local CODE_STATUSES = { c = 'completed', f = 'failed', x = 'expired', l = 'lost' }
-- Lower-case digits only: an id differing in case is another id (and not this scheme's).
local H = '[0-9a-f]'
local RUN_ID_HEX = '^cm_(' .. string.rep(H, 8) .. ')%-(' .. string.rep(H, 4) .. ')%-(' .. string.rep(H, 4) .. ')%-(' ..
  string.rep(H, 4) .. ')%-(' .. string.rep(H, 12) .. ')$'

-- Read once per script call (record_of hides a record retention has passed).
local record_clock = nil

-- Each byte by its two hex digits: gsub looks a pair up here instead of calling a function per pair.
local HEX_BYTES = (function()
  local bytes = {}
  for byte = 0, 255 do bytes[string.format('%02x', byte)] = string.char(byte) end
  return bytes
end)()

local function past_field(runId)
  local a, b, c, d, e = string.match(runId, RUN_ID_HEX)
  if not a then return runId end
  return (string.gsub(a .. b .. c .. d .. e, '..', HEX_BYTES))
end

local function past_key_of(runKey)
  local base, runId = string.match(runKey, '^(.*):run:(.*)$')
  return base .. ':past', runId
end

local function split_record(record)
  local tokens, pos = {}, 1
  while true do
    local at = string.find(record, SEP, pos, true)
    if not at then
      tokens[#tokens + 1] = string.sub(record, pos)
      return tokens
    end
    tokens[#tokens + 1] = string.sub(record, pos, at - 1)
    pos = at + 1
  end
end

local function field_token(name, value)
  if name == 'status' and STATUS_CODES[value] then return 'S' .. STATUS_CODES[value] end
  local code = FIELD_CODES[name]
  return code and (code .. value) or ('=' .. name .. '=' .. value)
end

-- The hash's fields (flat, as HGETALL answers) and by name, and where the entries' tokens begin.
local function read_fields(tokens)
  local fields, v, i = {}, {}, 1
  while tokens[i] ~= '' do
    local token = tokens[i]
    if i == 1 then token = string.sub(token, 2) end
    local code, name, value = string.sub(token, 1, 1), nil, nil
    if code == '=' then
      local eq = string.find(token, '=', 2, true)
      name, value = string.sub(token, 2, eq - 1), string.sub(token, eq + 1)
    elseif code == 'S' then
      name, value = 'status', CODE_STATUSES[string.sub(token, 2)]
    else
      name, value = CODE_FIELDS[code], string.sub(token, 2)
    end
    fields[#fields + 1] = name
    fields[#fields + 1] = value
    v[name] = value
    i = i + 1
  end
  return fields, v, i + 1
end

local function record_fields(record)
  return (read_fields(split_record(record)))
end

-- createdAt and endedAt of the hash's fields (kept compact: in milliseconds), from `ended` when
-- packed there (ended-run.lua: createdAt in base 36, then startedAt and endedAt after it).
local function record_times(v)
  if v.createdAt or v.endedAt then return tonumber(v.createdAt or ''), tonumber(v.endedAt or '') end
  local created, ended = string.match(v.ended or '', '^(%w+),%-?%d*,(%-?%d*),')
  if not created then return nil, nil end
  created = tonumber(created, 36)
  return created, ended ~= '' and created + tonumber(ended) or nil
end

local function record_entries(record, runId)
  local entries = {}
  if string.sub(record, 1, 1) ~= 'A' then return entries end
  local tokens = split_record(record)
  local _, v, from = read_fields(tokens)
  local ms = record_times(v)
  for j = from, #tokens - 1, 2 do
    local delta, seq, code, epoch = string.match(tokens[j], '^(%w+)%-?(%w*):(.)(%d+)$')
    ms = ms + tonumber(delta, 36)
    entries[#entries + 1] = { int(ms) .. '-' .. (seq == '' and '0' or int(tonumber(seq, 36))),
      { 'type', code, 'runId', runId, 'epoch', epoch, 'data', tokens[j + 1] } }
  end
  return entries
end

local function record_end_ms(record)
  -- Most records keep their times packed in `ended`: read there without splitting the record.
  local created, ended = string.match(record, SEP .. 'n(%w+),%-?%d*,(%-?%d+),')
  if created then return tonumber(created, 36) + tonumber(ended) end
  local _, v = read_fields(split_record(record))
  local _, endMs = record_times(v)
  return endMs or 0
end

local function record_of(runKey)
  local past, runId = past_key_of(runKey)
  local record = redis.call('HGET', past, past_field(runId))
  if not record then return false end
  if not record_clock then
    local t = redis.call('TIME')
    record_clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  if record_end_ms(record) + RETENTION_MS <= record_clock then return false end
  return record
end

local function run_fields(runKey, fields)
  local values = redis.call('HMGET', runKey, unpack(fields))
  for i = 1, #fields do
    if values[i] then return values end
  end
  local record = record_of(runKey)
  if not record then return values end
  local _, v = read_fields(split_record(record))
  for i, field in ipairs(fields) do values[i] = v[field] or false end
  return values
end

local function run_exists(runKey)
  return redis.call('EXISTS', runKey) == 1 or record_of(runKey) ~= false
end
