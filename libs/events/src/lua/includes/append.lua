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

  Event `ev` = {
    type, runId ('' for session events), epoch (number),
    head  = JSON object text of the event data without its raw fields (never decoded here),
    raws  = ordered list of {name, json}: JSON values spliced verbatim into the data,
    facts = table of plain strings the projections need (see event-encoding.ts),
    store = (store.committed only) { sets = {{field, json}...}, dels = {field...}, delta = bytes }:
            fields are store keys as JSON string text, values JSON text, never decoded here,
    tools = (tools.registered only) the full client tool list as JSON text.
  }
  User-written JSON (code, inputs, results) is never decoded in Lua: cjson rejects lone
  surrogate escapes and re-encodes numbers with 14 digits and empty arrays as objects.

  Return codes of check_run_write (mirrored in lua-errors.ts):
    -1 run not found, -2 run already ended (detail: status), -3 stale epoch (detail: stored epoch)
]]
--- @include "now-iso"

local TERMINAL = {
  ['run.completed'] = 'completed', ['run.failed'] = 'failed',
  ['run.expired'] = 'expired', ['run.lost'] = 'lost'
}
local ENDED = { completed = true, failed = true, expired = true, lost = true }

-- Returns nil when a run-scoped write may proceed, else {code, detail}.
local function check_run_write(K, runId, epoch)
  if runId == '' then return nil end
  local st = redis.call('HMGET', K[3], 'status', 'epoch')
  if not st[1] then return { -1, '' } end
  if epoch < tonumber(st[2]) then return { -3, st[2] } end
  if ENDED[st[1]] then return { -2, st[1] } end
  return nil
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
    redis.call('RPUSH', K[4], transcript_entry('input', 'exec', ev.runId, at, 'input', input))
    return
  end
  redis.call('HSET', run, 'updatedAt', at)
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
    if input then redis.call('RPUSH', K[4], transcript_entry('input', 'wait', ev.runId, at, 'input', input)) end
  elseif terminal then
    redis.call('HSET', run, 'status', terminal, 'endedAt', at)
    redis.call('HDEL', run, 'expiresAt', 'resumeToken', 'resumeUntil')
  end
  if result and (terminal or ev.type == 'run.parked') then
    redis.call('HSET', run, 'lastResult', result)
    local call = redis.call('HGET', run, 'call') or 'exec'
    redis.call('RPUSH', K[4], transcript_entry('result', call, ev.runId, at, 'result', result))
  end
end

-- The committed session store: the hash holds exactly what the log's store.committed events
-- add up to; the session hash keeps the running total of value bytes for the capacity check.
local function project_store(K, st)
  for _, s in ipairs(st.sets) do redis.call('HSET', K[6], s[1], s[2]) end
  -- One HDEL per field: a commit may delete more keys than unpack() can spread.
  for _, field in ipairs(st.dels) do redis.call('HDEL', K[6], field) end
  redis.call('HINCRBY', K[2], 'storeBytes', st.delta)
end

local function project_session(K, ev, at)
  local f = ev.facts
  redis.call('HSETNX', K[2], 'createdAt', at)
  redis.call('HSET', K[2], 'updatedAt', at)
  if ev.type == 'session.configured' then
    if f.agentId then redis.call('HSET', K[2], 'agentId', f.agentId)
    else redis.call('HDEL', K[2], 'agentId') end
    redis.call('HSET', K[2], 'codeMode', f.codeMode, 'shell', f.shell)
  elseif ev.type == 'exec.rejected' then
    redis.call('RPUSH', K[4], transcript_entry('input', f.call, '', at, 'input', raw_of(ev, 'input')))
    redis.call('RPUSH', K[4], transcript_entry('result', f.call, '', at, 'result', raw_of(ev, 'result')))
  elseif ev.type == 'store.committed' then
    project_store(K, ev.store)
  elseif ev.type == 'tools.registered' then
    -- Endpoints live only here, never in the event: a PUT replaces the whole list.
    redis.call('SET', K[6], ev.tools)
  end
end

-- Appends the event and updates every projection; returns the stream id.
local function append_event(K, ev)
  local at = now_iso()
  local data = splice_data(ev.head, ev.raws)
  local id = redis.call('XADD', K[1], '*', 'type', ev.type, 'runId', ev.runId,
    'epoch', ev.epoch, 'at', at, 'data', data)
  project_session(K, ev, at)
  if ev.runId ~= '' then project_run(K, ev, at, id) end
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
