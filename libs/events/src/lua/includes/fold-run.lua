--[[
  Folding a finished run into its record (run-record.lua says what a record is), called by
  append_event right after a terminal event, once everything else of the append is written.

    fold_run(K, runId, endId, endBytes): in the place of the terminal event's write of the run's
      hash (append.lua), makes the run's record from the hash as that write would leave it
      (staged_hash) and deletes the hash; answers false, having written nothing, when the run is
      not folded. `endBytes` is what the terminal entry counts (stored-bytes.lua). A record of the
      hash's fields alone takes the hash's place in the run's share of RUN_OVERHEAD; one with the
      entries deletes them and counts their values instead of them, and the run's share becomes
      FOLDED_RUN_OVERHEAD. Not folded: a run whose answer is owed to a wait (answerOwed,
      owe-answer.lua: the wait that takes the answer writes its hash), and a run retention already
      removed from the runs index (a dead run ended late: retention could not reach its record;
      its hash keeps its TTL).

  While someone follows the session's log (`<base>:followed`, set by EventLog.follow), the run's
  last entry stays in the stream until the session's next fold (`foldedEnd` in the session hash:
  its id and the bytes it counts), which deletes it: a reader blocked on the stream (the live
  tail's XREAD) is woken only by an entry that is still there when Redis serves it (Redis 7.2
  serves a woken XREAD by running it again). The record holds it too: readers take it once
  (read-events-page.lua), and `pastEvents` counts it once it leaves the stream. A session nobody
  follows keeps none: its stream's nodes are freed as their entries are folded.
]]
--- @include "settings"
--- @include "session-keys"
--- @include "run-record"
--- @include "ended-run"
--- @include "stored-bytes"
--- @include "run-hash"
--- @include "session-expiry"
--- @include "run-entries"

-- A field name the record cannot hold: one with its '=' separator or SEP.
local UNFOLDABLE_NAME = '[=' .. SEP .. ']'

-- The log's entries from `from` to the run's end: first as many as the run appended (`expected`:
-- its entries alone when no other run's are between them), then FOLD_SCAN_BATCH at a time; nil
-- when there are more than FOLD_SCAN_MAX.
local function entries_to_end(K, from, endId, expected)
  local entries, count = {}, math.min(expected, FOLD_SCAN_MAX + 1)
  while true do
    local batch = redis.call('XRANGE', K[1], from, endId, 'COUNT', count)
    for _, entry in ipairs(batch) do entries[#entries + 1] = entry end
    if #entries > FOLD_SCAN_MAX then return nil end
    if #batch < count or batch[#batch][1] == endId then return entries end
    from = '(' .. batch[#batch][1]
    count = FOLD_SCAN_BATCH
  end
end

-- The run's entries by the ids its hash lists (run-entries.lua): `expected` of them with the end,
-- read at once when nothing else lies between them, else one by one; nil when one is not there,
-- false when the hash lists none to rely on or not as many as the run counted (the log is read
-- from the request instead).
local function listed_entries(K, listed, endId, expected)
  local ids = listed_ids(listed)
  if not ids or #ids + 1 ~= expected then return false end
  ids[#ids + 1] = endId
  local entries = redis.call('XRANGE', K[1], ids[1], endId, 'COUNT', #ids)
  if #entries == #ids and entries[#entries][1] == endId then return entries end
  entries = {}
  for _, id in ipairs(ids) do
    local one = redis.call('XRANGE', K[1], id, id)
    if #one ~= 1 then return nil end
    entries[#entries + 1] = one[1]
  end
  return entries
end

-- The heads and data of the run's entries from its request to its end, with their ids and the
-- bytes each counted; nil when they are not all there in the shape this release writes, or their
-- data passes RECORD_MAX_DATA.
local function foldable_entries(K, runId, createdMs, endId, expected, listed)
  local entries = listed_entries(K, listed, endId, expected)
  if entries == false then entries = entries_to_end(K, int(createdMs) .. '-0', endId, expected) end
  if not entries then return nil end
  local tokens, ids, sizes, ms, data = {}, {}, {}, createdMs, 0
  for _, entry in ipairs(entries) do
    local f = entry[2]
    if f[4] == runId then
      data = data + #f[8]
      if data > RECORD_MAX_DATA then return nil end
      if #f ~= 8 or f[1] ~= 'type' or f[3] ~= 'runId' or f[5] ~= 'epoch' or f[7] ~= 'data' or #f[2] ~= 1
        or not string.match(f[6], '^%d+$') or string.find(f[8], SEP, 1, true) then
        return nil
      end
      local at, seq = string.match(entry[1], '^(%d+)%-(%d+)$')
      at, seq = tonumber(at), tonumber(seq)
      -- Oldest first from the run's request on, as the log and a list this release wrote name them.
      if at < ms then return nil end
      tokens[#tokens + 1] = id_offset(at - ms, seq) .. ':' .. f[2] .. f[6]
      tokens[#tokens + 1] = f[8]
      ids[#ids + 1] = entry[1]
      sizes[#sizes + 1] = ENTRY_OVERHEAD + #f[2] + #runId + #f[8]
      ms = at
    end
  end
  if ids[#ids] ~= endId then return nil end
  return tokens, ids, sizes
end

local function fold_run(K, runId, endId, endBytes)
  local stored = redis.call('HGETALL', K[3])
  -- Its events before the end, as counted until the end (run-history-cap.lua), and the end.
  local expected, listed = 1, nil
  for i = 1, #stored, 2 do
    if stored[i] == 'historyEvents' then expected = tonumber(stored[i + 1]) + 1 end
    if stored[i] == 'entries' then listed = stored[i + 1] end
  end
  local hash = staged_hash(stored)
  local tokens, v = {}, {}
  for i = 1, #hash, 2 do
    local name, value = hash[i], hash[i + 1]
    -- A value the record cannot hold leaves the run as it is: its hash and its entries.
    if string.find(value, SEP, 1, true) or string.find(name, UNFOLDABLE_NAME) then return false end
    v[name] = value
    tokens[#tokens + 1] = field_token(name, value)
  end
  if v.answerOwed or not v.status then return false end
  local created = record_times(v)
  local endMs = tonumber(string.match(endId, '^(%d+)'))
  if not created or endMs - created > RETENTION_MS then
    if not redis.call('ZSCORE', K[5], runId) then return false end
  end
  tokens[#tokens + 1] = ''
  local heads, ids, sizes
  if created and endMs - created <= SPAN_MS then heads, ids, sizes = foldable_entries(K, runId, created, endId, expected, listed) end
  tokens[1] = (heads and 'A' or 'B') .. tokens[1]
  for _, token in ipairs(heads or {}) do tokens[#tokens + 1] = token end
  local record = table.concat(tokens, SEP)
  local base = session_base(K)
  local past = base .. ':past'
  redis.call('HSET', past, past_field(runId), record)
  -- A new hash of past runs lives as long as the session's other keys: expire_session gives it their TTL.
  if redis.call('HLEN', past) == 1 then created_key = true end
  redis.call('DEL', K[3])
  drop_staged()
  run_folded = true
  local moved = { [endId] = endBytes + (heads and #record or 0) }
  if heads then
    local keep = redis.call('EXISTS', base .. ':followed') == 1
    local leaving = #ids
    -- The end's entry stays while the session is followed (see above); the one an earlier fold
    -- kept goes now, when it is still there.
    if keep then
      ids[#ids], sizes[#sizes] = nil, nil
      leaving = leaving - 1
    end
    local kept, keptBytes = string.match(redis.call('HGET', K[2], 'foldedEnd') or '', '^(%S+) (%d+)$')
    -- One XDEL: the run's entries are all there (just read), so one more deleted is the kept one.
    local gone = { unpack(ids) }
    if kept then gone[#gone + 1] = kept end
    if #gone > 0 and redis.call('XDEL', K[1], unpack(gone)) > #ids then
      leaving = leaving + 1
      moved[kept] = (moved[kept] or 0) - tonumber(keptBytes)
    end
    if keep then
      redis.call('HSET', K[2], 'foldedEnd', endId .. ' ' .. int(endBytes))
    elseif kept then
      redis.call('HDEL', K[2], 'foldedEnd')
    end
    redis.call('HINCRBY', K[2], 'pastEvents', leaving)
    for i, id in ipairs(ids) do moved[id] = (moved[id] or 0) - sizes[i] end
    -- The request's entry counted the run's hash and runs index entry (RUN_OVERHEAD, stored-bytes.lua).
    if string.find(heads[1], ':q%d+$') then moved[ids[1] or endId] = moved[ids[1] or endId] - (RUN_OVERHEAD - FOLDED_RUN_OVERHEAD) end
  end
  move_log_bytes(K, moved)
  return true
end
