--[[
  The one append path. Every script that writes an event calls `append_event`, which adds the
  stream entry and updates the session, run and transcript projections in the same step, so a
  projection can never disagree with the log. Run-scoped writes go through `check_run_write`
  first (run exists, epoch not stale, run not ended).

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

  Run history cap (SPEC §6). The run hash counts the run's events (`historyEvents`) and bytes of
  event data (`historyBytes`), and keeps the stream ms of its last event (`lastEventMs`). A write
  that passed check_run_write and is not terminal is refused when it would take the run past
  RUN_HISTORY_MAX_EVENTS or RUN_HISTORY_MAX_BYTES: append_event raises the error reply
  `RUN_HISTORY_LIMIT <runId> <events> <bytes>` (lua-errors.ts: RunHistoryLimitError) before it
  writes anything, so a script must write nothing between check_run_write and append_event.
  Terminal events always pass, so the run can then be failed. Lifecycle scripts that do not call
  check_run_write (request, start, resume, take-over, release) are not held to the cap: they
  write before appending, and their events are few and small; the run's next tool, output, park
  or store write is refused instead.

  Retention. A terminal event gives the run hash a TTL of RETENTION_MS. The session's log is
  trimmed on every terminal event, and on any event at most once per min(60 s, RETENTION_MS)
  (`trimmedAt` in the session hash): stream entries older than RETENTION_MS go (XTRIM MINID;
  stream ids carry the millisecond of the event's `at`), runs index entries with them, and
  transcript entries older than the oldest event left. Never past a live run: the trim point
  stops at the request time of the oldest run that has not ended, because a replay-safe run is
  rebuilt from its whole log, and a run may live far longer than RETENTION_MS (each park gives it
  up to snapshotTtlSeconds again, so no fixed age is safe). A run with no event for
  LIVE_RUN_MAX_IDLE_MS (longer than any park may last) is dead, ended or not, and holds nothing
  back. Session-level facts (store, tools, configuration) keep their projections; only their old
  events go, so a rebuild from a trimmed log sees the recent part only. Every key touched,
  including other runs' hashes read while trimming, lives in the session's hash-tag slot.

  Session expiry (SPEC §10). An append refreshes the TTL of all the session's long-lived keys
  (stream, session hash, transcript, runs index, store hash, client tools, skills, policy, approvals, the
  two stored-bytes keys; one PEXPIRE each; keys
  not created yet are skipped by Redis) to SESSION_TTL_MS + REFRESH_SLACK_MS, and the run hash of
  a run event with them: the session expires between SESSION_TTL_MS and SESSION_TTL_MS +
  REFRESH_SLACK_MS (min(60 s, 1% of the TTL)) after its last write, never before. The refresh of
  the session's keys is skipped when the session hash still has at least the TTL the append asks
  for (it was refreshed less than REFRESH_SLACK_MS ago) and the append may not have created a key:
  not a new session (HSETNX of createdAt), not `run.requested`, `store.committed` or
  `tools.registered`, and no transcript entry that made a new list. So a busy session's appends
  (run starts and ends, tool calls) cost one PTTL, not a dozen PEXPIREs. A TTL is never shortened (the
  session hash's PTTL is the floor), and an event of a live run (not terminal) raises it to at
  least LIVE_RUN_MAX_IDLE_MS: a live run writes again within that (else it is dead, see
  Retention), so a session and its run hashes always outlive their live runs, parked ones
  included. A terminal event gives the run hash min(RETENTION_MS, the session's TTL). The store
  and tools keys are named from K[2] (`<base>:session` → `<base>:store`, `<base>:tools`), in the
  session's slot. Writes that bypass append_event touch only keys that already have a TTL
  (reserve-resume and give-back-resume: the run hash) or set their own (request-run: the
  idempotency key lives min(its 24 h, the session's TTL), read from `session_ttl_ms`).

  Stored bytes (SPEC §10 "Redis storage"). The session hash keeps `storedBytes`: what the
  session's keys hold, counted as they are written and freed, in the same step. A stream entry
  counts its field values plus ENTRY_OVERHEAD (twice its data for a terminal or parked event:
  the run hash keeps that result as `lastResult` and expires about when the entry is trimmed;
  RUN_OVERHEAD more for `run.requested`, for the rest of the run hash and its runs index entry); a
  transcript entry its length plus LIST_OVERHEAD; the store its value bytes (`storeBytes`'s delta);
  the client tools their JSON; the skills the bytes their registration names (`skillsBytes`); a
  parked run's image (`<p>:{t:sid}:image:<runId>`, written by the
  worker before `run.parked`) its bytes at `run.parked`, kept on the run hash as `imageBytes` and
  given back by the run's terminal event. Trimming gives back what it removes without reading
  the entries it cuts: the log's bytes are also kept per bucket of BUCKET_MS (min(60 s,
  RETENTION_MS)) of their stream ids (`<p>:{t:sid}:stored-log`, hash bucket → bytes, and
  `<p>:{t:sid}:stored-minutes`, zset of those buckets), and a trim to a point gives back the
  buckets wholly before it; so the count is high by at most the session's log bytes of one bucket,
  until a later trim passes it (a new bucket refreshes the session's TTLs, once a bucket). A
  transcript entry is given back as it is popped. Results (libs/store) keep their own sizes hash;
  `measure-session.lua` adds them. The tenant's total lives in its own slot (`tenant-stored-bytes.lua`).

  The settings are compiled in: the loader (script-loader.ts) turns each `--- @define NAME` line
  below into `local NAME = <value>` from the deployment's configuration.
]]
--- @define RETENTION_MS
--- @define RUN_HISTORY_MAX_EVENTS
--- @define RUN_HISTORY_MAX_BYTES
--- @define LIVE_RUN_MAX_IDLE_MS
--- @define SESSION_TTL_MS
--- @include "now-iso"

local TERMINAL = {
  ['run.completed'] = 'completed', ['run.failed'] = 'failed',
  ['run.expired'] = 'expired', ['run.lost'] = 'lost'
}
local ENDED = { completed = true, failed = true, expired = true, lost = true }
-- Bounded work per trim: runs index entries looked at, transcript entries popped.
local TRIM_BATCH = 100
local TRANSCRIPT_POP_MAX = 1000
local TRIM_EVERY_MS = math.min(60000, RETENTION_MS)
-- Stored bytes (see the header): per stream entry and per transcript entry beyond their values.
local ENTRY_OVERHEAD = 64
local LIST_OVERHEAD = 16
local IMAGE_OVERHEAD = 64
-- A run's hash (about 15 fields) and runs index entry, counted with its run.requested entry: the
-- hash expires RETENTION_MS after the run's end, about when retention trims that entry.
local RUN_OVERHEAD = 1024
-- The log's stored bytes are kept per BUCKET_MS of stream ids; at most BUCKETS_PER_TRIM given back per trim.
local BUCKET_MS = math.min(60000, RETENTION_MS)
local BUCKETS_PER_TRIM = 1000
-- Session expiry (see the header): how much longer than asked a refresh sets, so the next appends may skip it.
local REFRESH_SLACK_MS = math.min(60000, math.floor(SESSION_TTL_MS / 100))
-- Events that may create a session key their append must give a TTL.
local CREATES_KEYS = { ['run.requested'] = true, ['store.committed'] = true, ['tools.registered'] = true,
  ['skills.registered'] = true }

-- The session's TTL in ms after the last append_event (request-run caps its idempotency key by it).
local session_ttl_ms = SESSION_TTL_MS

-- The run whose write check_run_write let through: append_event holds it to the history cap.
local capped_run = nil

-- Set when this append created a key (a new session, a transcript list): expire_session refreshes then.
local created_key = false

-- Integers as Redis arguments (a Lua number may otherwise be sent in exponent form).
local function int(n) return string.format('%d', n) end

-- Milliseconds since 1970 of a time as now_iso() writes it (days-from-civil, the inverse of its algorithm).
local function iso_ms(iso)
  local y, mo, d, h, mi, s, ms = string.match(iso, '^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.(%d+)Z$')
  y, mo = tonumber(y), tonumber(mo)
  if mo <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((mo + 9) % 12) + 2) / 5) + tonumber(d) - 1
  local days = era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
  return (((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60 + tonumber(s)) * 1000 + tonumber(ms)
end

-- Stored bytes (see the header): what one stream entry counts.
local function entry_bytes(type, runId, at, data)
  local n = ENTRY_OVERHEAD + #type + #runId + #at + #data
  if TERMINAL[type] or type == 'run.parked' then n = n + #data end
  if type == 'run.requested' then n = n + RUN_OVERHEAD end
  return n
end

-- What this script changed the session's storedBytes by, written once by flush_stored.
local stored_delta = 0

local function count_stored(delta)
  stored_delta = stored_delta + delta
end

local function flush_stored(K)
  if stored_delta ~= 0 then redis.call('HINCRBY', K[2], 'storedBytes', stored_delta) end
  stored_delta = 0
end

-- `<p>:{t:sid}` from the session hash's name: every key of the session starts with it.
local function session_base(K)
  return string.sub(K[2], 1, -#':session' - 1)
end

-- Returns nil when a run-scoped write may proceed, else {code, detail}.
local function check_run_write(K, runId, epoch)
  if runId == '' then return nil end
  local st = redis.call('HMGET', K[3], 'status', 'epoch')
  if not st[1] then return { -1, '' } end
  if epoch < tonumber(st[2]) then return { -3, st[2] } end
  if ENDED[st[1]] then return { -2, st[1] } end
  capped_run = runId
  return nil
end

-- Raises RUN_HISTORY_LIMIT when this write would take its run past the cap (see the header).
local function check_history(K, ev, bytes)
  if capped_run ~= ev.runId or TERMINAL[ev.type] then return end
  local h = redis.call('HMGET', K[3], 'historyEvents', 'historyBytes')
  local events, used = tonumber(h[1] or '0'), tonumber(h[2] or '0')
  if events + 1 > RUN_HISTORY_MAX_EVENTS or used + bytes > RUN_HISTORY_MAX_BYTES then
    error({ err = 'RUN_HISTORY_LIMIT ' .. ev.runId .. ' ' .. int(events) .. ' ' .. int(used) })
  end
end

local function count_history(K, bytes, ms)
  redis.call('HINCRBY', K[3], 'historyEvents', 1)
  redis.call('HINCRBY', K[3], 'historyBytes', bytes)
  redis.call('HSET', K[3], 'lastEventMs', int(ms))
end

local function splice_data(head, raws)
  if #raws == 0 then return head end
  local parts = {}
  for i, r in ipairs(raws) do parts[i] = cjson.encode(r[1]) .. ':' .. r[2] end
  local sep = head == '{}' and '' or ','
  return string.sub(head, 1, -2) .. sep .. table.concat(parts, ',') .. '}'
end

local function raw_of(ev, name)
  for _, r in ipairs(ev.raws) do
    if r[1] == name then return r[2] end
  end
  return nil
end

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

-- A parked run's image counts from its park to the run's end (see the header).
local function count_image(K, ev)
  local held = tonumber(redis.call('HGET', K[3], 'imageBytes') or '0')
  local now = 0
  if ev.type == 'run.parked' then
    local image = session_base(K) .. ':image:' .. ev.runId
    local size = redis.call('HSTRLEN', image, 'image') + redis.call('HSTRLEN', image, 'host')
    if size > 0 then now = size + IMAGE_OVERHEAD end
  end
  if now == held then return end
  if now > 0 then redis.call('HSET', K[3], 'imageBytes', now) else redis.call('HDEL', K[3], 'imageBytes') end
  count_stored(now - held)
end

local function project_run(K, ev, at, id)
  local f = ev.facts
  local run = K[3]
  if ev.type == 'run.requested' then
    redis.call('HSET', run, 'runId', ev.runId, 'title', raw_of(ev, 'title'), 'status', 'requested',
      'restartSafe', f.restartSafe, 'epoch', ev.epoch, 'createdAt', at, 'updatedAt', at, 'call', 'exec')
    redis.call('ZADD', K[5], tonumber(string.match(id, '^(%d+)')), ev.runId)
    redis.call('HINCRBY', K[2], 'runs', 1)
    local input = '{"title":' .. raw_of(ev, 'title') .. ',"code":' .. raw_of(ev, 'code') ..
      ',"restartSafe":' .. f.restartSafe .. ',"awaitResults":' .. f.awaitResults .. '}'
    push_transcript(K, transcript_entry('input', 'exec', ev.runId, at, 'input', input))
    return
  end
  redis.call('HSET', run, 'updatedAt', at)
  -- SPEC §16: a run that dispatched a tool call gets the dispatched repair sentence (finish-run.lua).
  if ev.type == 'tool.called' then redis.call('HSET', run, 'toolCalled', '1') end
  local result = raw_of(ev, 'result')
  local terminal = TERMINAL[ev.type]
  if ev.type == 'run.started' then
    redis.call('HSET', run, 'status', 'running', 'owner', f.workerId, 'epoch', ev.epoch, 'startedAt', at)
  elseif ev.type == 'run.parked' then
    redis.call('HSET', run, 'status', 'waiting', 'parkedAt', at)
    if f.expiresAt then redis.call('HSET', run, 'expiresAt', f.expiresAt) end
  elseif ev.type == 'run.resumed' then
    redis.call('HSET', run, 'status', 'running', 'epoch', ev.epoch, 'call', 'wait')
    if f.workerId then redis.call('HSET', run, 'owner', f.workerId) end
    redis.call('HDEL', run, 'parkedAt', 'expiresAt')
    local input = raw_of(ev, 'input')
    if input then push_transcript(K, transcript_entry('input', 'wait', ev.runId, at, 'input', input)) end
  elseif terminal then
    redis.call('HSET', run, 'status', terminal, 'endedAt', at)
    redis.call('HDEL', run, 'expiresAt', 'resumeToken', 'resumeUntil', 'resumeKey')
  end
  if terminal or ev.type == 'run.parked' then count_image(K, ev) end
  if result and (terminal or ev.type == 'run.parked') then
    redis.call('HSET', run, 'lastResult', result, 'resultEvent', id)
    local call = redis.call('HGET', run, 'call') or 'exec'
    push_transcript(K, transcript_entry('result', call, ev.runId, at, 'result', result))
  end
end

-- The committed session store: the hash holds exactly what the log's store.committed events
-- add up to; the session hash keeps the running total of value bytes for the capacity check.
local function project_store(K, st)
  for _, s in ipairs(st.sets) do redis.call('HSET', K[6], s[1], s[2]) end
  -- One HDEL per field: a commit may delete more keys than unpack() can spread.
  for _, field in ipairs(st.dels) do redis.call('HDEL', K[6], field) end
  redis.call('HINCRBY', K[2], 'storeBytes', st.delta)
  count_stored(st.delta)
end

local function project_session(K, ev, at)
  local f = ev.facts
  if redis.call('HSETNX', K[2], 'createdAt', at) == 1 then created_key = true end
  redis.call('HSET', K[2], 'updatedAt', at)
  if ev.type == 'session.configured' then
    if f.agentId then redis.call('HSET', K[2], 'agentId', f.agentId)
    else redis.call('HDEL', K[2], 'agentId') end
    redis.call('HSET', K[2], 'codeMode', f.codeMode, 'shell', f.shell)
    if f.agents == '1' then redis.call('HSET', K[2], 'agents', '1') else redis.call('HDEL', K[2], 'agents') end
    if f.notifyUrl then redis.call('HSET', K[2], 'notifyUrl', f.notifyUrl)
    else redis.call('HDEL', K[2], 'notifyUrl') end
    -- request-run compares it with the version its caller's settings came from (settings_changed).
    redis.call('HINCRBY', K[2], 'configVersion', 1)
  elseif ev.type == 'exec.rejected' then
    push_transcript(K, transcript_entry('input', f.call, '', at, 'input', raw_of(ev, 'input')))
    push_transcript(K, transcript_entry('result', f.call, '', at, 'result', raw_of(ev, 'result')))
  elseif ev.type == 'store.committed' then
    project_store(K, ev.store)
  elseif ev.type == 'tools.registered' then
    -- Endpoints live only here, never in the event: a PUT replaces the whole list.
    local before = redis.call('STRLEN', K[6])
    redis.call('RENAME', ev.tools.staged, K[6])
    redis.call('HSET', K[2], 'toolsVersion', ev.tools.version)
    count_stored(redis.call('STRLEN', K[6]) - before)
  elseif ev.type == 'skills.registered' then
    -- SPEC §15: a PUT replaces the whole set.
    local sk = ev.skills
    local before = tonumber(redis.call('HGET', K[2], 'skillsBytes') or '0')
    if sk.count > 0 then
      redis.call('RENAME', sk.descriptions, K[6])
      redis.call('RENAME', sk.docs, K[7])
      redis.call('HSET', K[2], 'skillsBytes', sk.bytes)
    else
      redis.call('DEL', K[6], K[7])
      redis.call('HDEL', K[2], 'skillsBytes')
    end
    count_stored(sk.bytes - before)
  end
end

-- The stream id from which the log may be trimmed: `cutoff`, or the request time of the oldest
-- live run if that is earlier. Runs index entries before the returned point are all of runs that
-- ended, vanished (their hash expired) or died, and may go.
local function trim_point(K, runKeyBase, cutoff, nowMs)
  local entries = redis.call('ZRANGE', K[5], '-inf', '(' .. int(cutoff), 'BYSCORE', 'LIMIT', 0, TRIM_BATCH, 'WITHSCORES')
  for i = 1, #entries, 2 do
    local st = redis.call('HMGET', runKeyBase .. entries[i], 'status', 'lastEventMs')
    local idle = st[2] and nowMs - tonumber(st[2]) > LIVE_RUN_MAX_IDLE_MS
    if st[1] and not ENDED[st[1]] and not idle then return tonumber(entries[i + 1]) end
  end
  -- A full batch: runs after it are unseen, so stop at the last one seen.
  if #entries == 2 * TRIM_BATCH then return tonumber(entries[#entries]) end
  return cutoff
end

-- Transcript entries are in log order; those older than the oldest event left are popped, or
-- older than `point` (ms) when no event is left. Each entry starts
-- {"kind":..,"call":..,"runId":..,"at":"<iso>" (transcript_entry), so the first "at" is its own.
local function trim_transcript(K, point)
  local oldest = redis.call('XRANGE', K[1], '-', '+', 'COUNT', 1)[1]
  local keep
  if oldest then
    for i = 1, #oldest[2], 2 do
      if oldest[2][i] == 'at' then keep = oldest[2][i + 1] end
    end
    if not keep then return end
  end
  for _ = 1, TRANSCRIPT_POP_MAX do
    local entry = redis.call('LINDEX', K[4], 0)
    local at = entry and string.match(entry, '"at":"([^"]*)"')
    if not at then return end
    if keep then
      if at >= keep then return end
    elseif iso_ms(at) >= point then
      return
    end
    redis.call('LPOP', K[4])
    count_stored(-(#entry + LIST_OVERHEAD))
  end
end

-- Stored bytes of the log are kept per BUCKET_MS of their entries' ids (see the header): the
-- buckets wholly before `point` (ms) are given back once the stream is cut there, at most
-- BUCKETS_PER_TRIM per trim (the next trim goes on).
local function give_back_log(K, point)
  local base = session_base(K)
  local minutes = redis.call('ZRANGE', base .. ':stored-minutes', '-inf', '(' .. int(math.floor(point / BUCKET_MS)),
    'BYSCORE', 'LIMIT', 0, BUCKETS_PER_TRIM)
  if #minutes == 0 then return end
  local freed = 0
  for _, minute in ipairs(minutes) do
    freed = freed + tonumber(redis.call('HGET', base .. ':stored-log', minute) or '0')
    redis.call('HDEL', base .. ':stored-log', minute)
  end
  redis.call('ZREM', base .. ':stored-minutes', unpack(minutes))
  count_stored(-freed)
end

-- Counts a new stream entry in its bucket; a new bucket may have made the two keys: they need their TTL.
local function count_log(K, id, bytes)
  local base = session_base(K)
  local minute = int(math.floor(tonumber(string.match(id, '^(%d+)')) / BUCKET_MS))
  redis.call('HINCRBY', base .. ':stored-log', minute, bytes)
  if redis.call('ZADD', base .. ':stored-minutes', 'NX', minute, minute) == 1 then created_key = true end
  count_stored(bytes)
end

-- Retention (see the header): trims the session's log, runs index and transcript now.
local function trim_session(K, nowMs)
  redis.call('HSET', K[2], 'trimmedAt', int(nowMs))
  local runKeyBase = session_base(K) .. ':run:'
  local point = trim_point(K, runKeyBase, nowMs - RETENTION_MS, nowMs)
  redis.call('ZREMRANGEBYSCORE', K[5], '-inf', '(' .. int(point))
  -- Exact, not `~`: whole stream nodes below the point are dropped without reading their entries,
  -- so the cost is one step per node plus the one node the point falls in, and the cut lies
  -- exactly between two milliseconds, where the transcript is cut too.
  redis.call('XTRIM', K[1], 'MINID', int(point))
  give_back_log(K, point)
  trim_transcript(K, point)
end

-- Retention (see the header): on terminal events, else at most once per TRIM_EVERY_MS.
local function maybe_trim(K, ev, nowMs)
  if not TERMINAL[ev.type] then
    local last = redis.call('HGET', K[2], 'trimmedAt')
    if last and nowMs - tonumber(last) < TRIM_EVERY_MS then return end
  end
  trim_session(K, nowMs)
end

-- XADDs the entry with the millisecond of `at` as its id's time (`<ms>-*`), so that the log cut by
-- id is cut by `at` as well; when the clock stepped back behind the stream's top id, Redis picks.
local function xadd(K, ev, at, data)
  local fields = { 'type', ev.type, 'runId', ev.runId, 'epoch', ev.epoch, 'at', at, 'data', data }
  local id = redis.pcall('XADD', K[1], int(iso_ms(at)) .. '-*', unpack(fields))
  if type(id) == 'table' then id = redis.call('XADD', K[1], '*', unpack(fields)) end
  return id
end

-- Session expiry (see the header): refreshes the TTL of the session's long-lived keys unless they
-- are fresh, and of the run hash; returns the session's TTL in ms.
local function expire_session(K, ev)
  local ttl = SESSION_TTL_MS
  local live = ev.runId ~= '' and not TERMINAL[ev.type]
  if live and LIVE_RUN_MAX_IDLE_MS > ttl then ttl = LIVE_RUN_MAX_IDLE_MS end
  local left = redis.call('PTTL', K[2])
  local fresh = left >= ttl and not created_key and not CREATES_KEYS[ev.type]
  local target = math.max(ttl + REFRESH_SLACK_MS, left)
  if not fresh then
    local base = session_base(K)
    for _, key in ipairs({ K[1], K[2], K[4], K[5], base .. ':store', base .. ':tools',
      base .. ':skills', base .. ':skill-docs', base .. ':policy', base .. ':approvals', base .. ':stored-log',
      base .. ':stored-minutes' }) do
      redis.call('PEXPIRE', key, int(target))
    end
  end
  if live then
    redis.call('PEXPIRE', K[3], int(target))
  elseif ev.runId ~= '' then
    redis.call('PEXPIRE', K[3], int(math.min(RETENTION_MS, target)))
  end
  return math.max(ttl, left)
end

-- Appends the event and updates every projection; returns the stream id. Raises
-- RUN_HISTORY_LIMIT, before writing anything, when the run's history cap refuses the event.
local function append_event(K, ev)
  local data = splice_data(ev.head, ev.raws)
  check_history(K, ev, #data)
  local at = now_iso()
  local id = xadd(K, ev, at, data)
  count_log(K, id, entry_bytes(ev.type, ev.runId, at, data))
  local ms = tonumber(string.match(id, '^(%d+)'))
  project_session(K, ev, at)
  if ev.runId ~= '' then
    project_run(K, ev, at, id)
    count_history(K, #data, ms)
  end
  maybe_trim(K, ev, ms)
  flush_stored(K)
  session_ttl_ms = expire_session(K, ev)
  return id
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
