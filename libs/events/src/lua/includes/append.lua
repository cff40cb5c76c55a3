--[[
  The one append path. Every script that writes an event calls `append_event`, which adds the
  stream entry and updates the session, run and transcript projections in the same step, so a
  projection can never disagree with the log. Run-scoped writes go through `check_run_write`
  first (run exists, epoch not stale, run not ended), which reads the run hash once for the whole
  append (run-hash.lua).

  Expects the five session keys in this order (KeySpace.scriptKeys):
    K[1] stream       <p>:{t:sid}:events
    K[2] session      <p>:{t:sid}:session
    K[3] run          <p>:{t:sid}:run:<runId>
    K[4] transcript   <p>:{t:sid}:transcript
    K[5] runs index   <p>:{t:sid}:runs
    K[6] only for the two event types that own one more projection key:
         store.committed  → store hash   <p>:{t:sid}:store
         tools.registered → client tools <p>:{t:sid}:tools
         skills.registered → skill descriptions <p>:{t:sid}:skills, and K[7] skill contents
                             <p>:{t:sid}:skill-docs

  Event `ev` = {
    type, runId ('' for session events), epoch (number),
    head  = JSON object text of the event data without its raw fields (never decoded here),
    raws  = ordered list of {name, json}: JSON values spliced verbatim into the data,
    facts = table of plain strings the projections need (see event-encoding.ts),
    packed = (optional) the spliced data as the writer packed it (event-packing.ts), stored in its
            place; the run history cap still counts the data unpacked, stored bytes what is kept.
    store = (store.committed only) { sets = {{field, json}...}, dels = {field...}, delta = bytes }:
            fields are store keys as JSON string text, values JSON text, never decoded here,
    tools = (tools.registered only) { staged = key holding the new list's JSON text, version }:
            the staged key is renamed onto the client tools key, and `version` kept as the
            session's `toolsVersion`.
    skills = (skills.registered only) { count, bytes, descriptions = staged hash, docs = staged hash }:
            the staged hashes are renamed onto K[6] and K[7] (both removed when count is 0), and
            `bytes` kept as the session's `skillsBytes`.
  }
  User-written JSON (code, inputs, results) is never decoded in Lua: cjson rejects lone
  surrogate escapes and re-encodes numbers with 14 digits and empty arrays as objects.

  Return codes of check_run_write (mirrored in lua-errors.ts):
    -1 run not found, -2 run already ended (detail: status), -3 stale epoch (detail: stored epoch)

  Each concern of an append has its include, with its rule in its header: the run hash's one read
  and one write (run-hash.lua), the projections (projections.lua, transcript.lua), the run history
  cap (run-history-cap.lua), retention (retention.lua), session expiry (session-expiry.lua), stored
  bytes (stored-bytes.lua), a finished run's record (run-record.lua, fold-run.lua), and the
  deployment's settings they are built with (settings.lua).
]]
--- @include "now-iso"
--- @include "session-keys"
--- @include "run-hash"
--- @include "session-expiry"
--- @include "stored-bytes"
--- @include "run-history-cap"
--- @include "projections"
--- @include "retention"
--- @include "entry-codes"
--- @include "fold-run"

-- Tool calls' events written together (append-events.lua) make a batch: the run hash is read once
-- and written once for all of them, and the stored bytes, the trim look and the TTLs are dealt
-- with once, after the last. That is what the same appends one by one write because these events
-- change neither the run's status nor its epoch, delete no run field, and push no transcript mark:
-- a type that does is not BATCHED. `batch` is set while one is open: the stream ms and the event
-- last appended in it.
local BATCHED = { ['tool.called'] = true, ['tool.settled'] = true, ['tool.blocked'] = true }
local batch = nil

-- Returns nil when a run-scoped write may proceed, else {code, detail}.
local function check_run_write(K, runId, epoch)
  if runId == '' then return nil end
  local st = (batch and read_of(runId)) or read_run(K, runId)
  if not st.status then return { -1, '' } end
  if epoch < tonumber(st.epoch) then return { -3, st.epoch } end
  if ENDED[st.status] then return { -2, st.status } end
  capped_run = runId
  return nil
end

local function splice_data(head, raws)
  if #raws == 0 then return head end
  local parts = {}
  for i, r in ipairs(raws) do parts[i] = cjson.encode(r[1]) .. ':' .. r[2] end
  local sep = head == '{}' and '' or ','
  return string.sub(head, 1, -2) .. sep .. table.concat(parts, ',') .. '}'
end

-- XADDs the entry (its type and data values as entry_values keeps them) with `at`'s millisecond
-- (`atMs`) as its id's time (`<ms>-*`), so that the log cut by id is cut by `at` as well; when the
-- clock stepped back behind the stream's top id, Redis picks.
-- Kept compact (COMPACT_RUNS), an entry whose id carries `at`'s millisecond does not repeat it:
-- readers take `at` from the id (decodeEntry). Returns the id and the `at` kept ('' for none).
local function xadd(K, ev, at, atMs, stored_type, data)
  local fields = { 'type', stored_type, 'runId', ev.runId, 'epoch', ev.epoch, 'data', data }
  local kept = ''
  if COMPACT_RUNS ~= 1 then fields[9], fields[10], kept = 'at', at, at end
  local id = redis.pcall('XADD', K[1], int(atMs) .. '-*', unpack(fields))
  if type(id) == 'table' then
    -- The id is Redis's choice now, so it no longer carries `at`: the entry keeps it.
    fields[9], fields[10], kept = 'at', at, at
    id = redis.call('XADD', K[1], '*', unpack(fields))
  end
  return id, kept
end

-- Appends the event and updates every projection; returns the stream id. Raises
-- RUN_HISTORY_LIMIT, before writing anything, when the run's history cap refuses the event.
local function append_event(K, ev)
  local data = splice_data(ev.head, ev.raws)
  check_history(K, ev, #data)
  local at, atMs = now_iso(), now_ms()
  local stored_type, stored = entry_values(ev, ev.packed or data)
  local id, kept_at = xadd(K, ev, at, atMs, stored_type, stored)
  local bytes = entry_bytes(ev.type, stored_type, ev.runId, kept_at, stored)
  -- Kept compact, a finished run becomes one record (fold-run.lua): its end's bytes are counted
  -- with what the fold moves, and the fold writes the record instead of the hash's changes.
  local folding = COMPACT_RUNS == 1 and TERMINAL[ev.type]
  if not folding then count_log(K, id, bytes) end
  local ms = tonumber(string.match(id, '^(%d+)'))
  project_session(K, ev, at, id)
  if ev.runId ~= '' then
    project_run(K, ev, at, atMs, id)
    count_history(K, ev, #data, ms)
    if not (folding and fold_run(K, ev.runId, id, bytes)) then
      if folding then count_log(K, id, bytes) end
      write_run(K)
    end
  end
  if batch then
    batch.ms, batch.ev = ms, ev
    return id
  end
  maybe_trim(K, ms)
  flush_stored(K)
  session_ttl_ms = expire_session(K, ev)
  return id
end

-- Opens a batch: the writes append_event makes once per event wait for close_batch.
local function open_batch()
  batch = {}
  hold_run(true)
  hold_log()
end

-- Makes the writes of the batch's events, as the last event's append_event would have.
local function close_batch(K)
  local last = batch
  batch = nil
  write_log(K)
  hold_run(false)
  write_run(K)
  if not last.ev then return end
  maybe_trim(K, last.ms)
  flush_stored(K)
  session_ttl_ms = expire_session(K, last.ev)
end

-- Reads `{name, json}` raw pairs and then `name, value` fact pairs from ARGV[from..].
local function read_raws_and_facts(from)
  local n = tonumber(ARGV[from])
  local raws, facts = {}, {}
  local i = from + 1
  for _ = 1, n do
    raws[#raws + 1] = { ARGV[i], ARGV[i + 1] }
    i = i + 2
  end
  while i <= #ARGV do
    facts[ARGV[i]] = ARGV[i + 1]
    i = i + 2
  end
  return raws, facts
end

-- Types with preconditions or projection keys of their own, each written by its own script.
local DEDICATED = {
  ['run.requested'] = true, ['run.started'] = true, ['session.configured'] = true,
  ['store.committed'] = true, ['tools.registered'] = true, ['skills.registered'] = true
}

-- The generic append of append-event.lua and append-events.lua (see their headers): the type's
-- and the run's checks, the event with its projections, then the publish. A `run.parked` for a
-- run already parked is the retry of one whose reply was lost: it answers the first park's id.
-- Returns {1, eventId} or a refusal {code, detail}; raises RUN_HISTORY_LIMIT as append_event does.
local function append_generic(K, ev, channel, message)
  if DEDICATED[ev.type] then return { -5, ev.type } end
  local refused = check_run_write(K, ev.runId, ev.epoch)
  if refused then return refused end
  if ev.type == 'run.parked' then
    local st = redis.call('HMGET', K[3], 'status', 'resultEvent')
    if st[1] == 'waiting' and st[2] then return { 1, st[2] } end
  end
  local id = append_event(K, ev)
  if channel ~= '' then redis.call('SPUBLISH', channel, message) end
  return { 1, id }
end
