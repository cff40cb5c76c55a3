--[[
  The projections of the session's log, written by append_event in the same step as the event,
  so that a projection can never disagree with the log: the session hash (K[2]), the run hash
  (K[3]) and runs index (K[5]), the transcript (K[4]), and for the three event types that own one
  more key, K[6] (store.committed → store hash, tools.registered → client tools,
  skills.registered → skill descriptions) and K[7] (skill contents). User JSON is spliced, never
  decoded (see append.lua); projections read the event's plain-string `facts`.

    project_session(K, ev, at, id), project_run(K, ev, at, atMs, id): the projections of the
      event `id` appended at `at` (`atMs` its millisecond, now_ms); the transcript gets marks
      naming it (transcript.lua), never a copy of its data. The run hash's changes are staged
      (set_run, del_run) for append_event's one write (run-hash.lua), the list of the run's
      entries' ids among them (run-entries.lua).
    raw_of(ev, name): the JSON text of one of the event's raw fields, or nil.
]]
--- @include "now-iso"
--- @include "session-keys"
--- @include "run-hash"
--- @include "session-expiry"
--- @include "stored-bytes"
--- @include "transcript"
--- @include "run-entries"

local function raw_of(ev, name)
  for _, r in ipairs(ev.raws) do
    if r[1] == name then return r[2] end
  end
  return nil
end

-- `at` as a run's hash keeps createdAt, startedAt and endedAt: kept compact (COMPACT_RUNS), in
-- milliseconds since 1970 (`atMs`: 13 digits Redis stores as an integer, where the ISO string
-- takes 24 bytes; views.ts writes them back as `at` reads).
local function run_time(at, atMs)
  if COMPACT_RUNS == 1 then return int(atMs) end
  return at
end

local function project_run(K, ev, at, atMs, id)
  local f = ev.facts
  note_entry(K, ev, id)
  if ev.type == 'run.requested' then
    set_run('runId', ev.runId)
    set_run('title', raw_of(ev, 'title'))
    set_run('status', 'requested')
    -- Kept compact, a run that is not restartSafe has no field for it: a view reads it absent as false.
    if COMPACT_RUNS ~= 1 or f.restartSafe == 'true' then set_run('restartSafe', f.restartSafe) end
    set_run('epoch', ev.epoch)
    set_run('createdAt', run_time(at, atMs))
    set_run('updatedAt', at)
    set_run('call', 'exec')
    if f.replyTo then set_run('replyTo', f.replyTo) end
    redis.call('ZADD', K[5], tonumber(string.match(id, '^(%d+)')), ev.runId)
    -- A runs index made anew (the first run, or the first after a trim emptied it) needs its TTL.
    if redis.call('ZCARD', K[5]) == 1 then created_key = true end
    redis.call('HINCRBY', K[2], 'runs', 1)
    push_transcript(K, transcript_mark('input', 'exec', id))
    return
  end
  local terminal = TERMINAL[ev.type]
  -- What only a live run's writers read (a claim's retry, an idle wait, the next result's call)
  -- goes at its end: the hash stays as long as retention keeps the run. So does, when finished runs
  -- are kept compact, what a view derives: the id is the key's, `updatedAt` is `endedAt` (views.ts).
  if terminal then
    for _, field in ipairs({ 'claimToken', 'lastEvent', 'call', 'replyTo', 'trailMark' }) do del_run(field) end
    if COMPACT_RUNS == 1 then
      del_run('runId')
      del_run('updatedAt')
    else
      set_run('updatedAt', at)
    end
  else
    set_run('updatedAt', at)
    -- `lastEvent`: answer-idle-wait.lua answers only if nothing was appended to the run since its caller read it.
    set_run('lastEvent', id)
  end
  -- SPEC §16: a run that dispatched a tool call gets the dispatched repair sentence (finish-run.lua).
  if ev.type == 'tool.called' then set_run('toolCalled', '1') end
  local result = raw_of(ev, 'result')
  if ev.type == 'run.started' then
    -- Its worker answers its caller from now on (abandon-run.lua no longer can).
    del_run('replyTo')
    set_run('status', 'running')
    set_run('owner', f.workerId)
    set_run('epoch', ev.epoch)
    set_run('startedAt', run_time(at, atMs))
    if f.claimToken then set_run('claimToken', f.claimToken) end
  elseif ev.type == 'run.parked' then
    set_run('status', 'waiting')
    set_run('parkedAt', at)
    if f.expiresAt then set_run('expiresAt', f.expiresAt) end
  elseif ev.type == 'run.resumed' then
    set_run('status', 'running')
    set_run('epoch', ev.epoch)
    set_run('call', 'wait')
    if f.workerId then set_run('owner', f.workerId) end
    del_run('parkedAt')
    del_run('expiresAt')
    if raw_of(ev, 'input') then push_transcript(K, transcript_mark('input', 'wait', id)) end
  elseif ev.type == 'run.waited' then
    push_transcript(K, transcript_mark('input', 'wait', id))
    push_transcript(K, transcript_mark('result', 'wait', id))
  elseif terminal then
    set_run('status', terminal)
    set_run('endedAt', run_time(at, atMs))
    for _, field in ipairs({ 'expiresAt', 'resumeToken', 'resumeUntil', 'resumeKey' }) do del_run(field) end
  end
  if terminal or ev.type == 'run.parked' then count_image(K, ev) end
  if result and (terminal or ev.type == 'run.parked') then
    -- The hash names the event that carries the result (read-run.lua reads it there) and keeps no
    -- copy: a value past 64 B takes a hash out of Redis's small encoding, ~1.9 KB a run instead of
    -- ~0.5 KB. `lastResult` is an earlier release's copy, stale from now on.
    set_run('resultEvent', id)
    if f.replaySafe then set_run('replaySafe', f.replaySafe) end
    del_run('lastResult')
    local read = read_of(ev.runId)
    local call
    if read then call = read.call else call = redis.call('HGET', K[3], 'call') end
    push_transcript(K, transcript_mark('result', call or 'exec', id))
  end
  -- Kept compact, a finished run's hash keeps what only a view reads as one field (ended-run.lua).
  if terminal and COMPACT_RUNS == 1 then pack_ended(K) end
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

-- The `updatedAt` this script call gave the session hash.
local session_updated = nil

local function project_session(K, ev, at, id)
  local f = ev.facts
  -- `updatedAt` is written by every append (once per script call: its appends share `at`), so a new
  -- field means a new hash: only then createdAt.
  if at ~= session_updated then
    session_updated = at
    if redis.call('HSET', K[2], 'updatedAt', at) == 1 and redis.call('HSETNX', K[2], 'createdAt', at) == 1 then
      created_key = true
    end
  end
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
    push_transcript(K, transcript_mark('input', f.call, id))
    push_transcript(K, transcript_mark('result', f.call, id))
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
