--[[
  Session expiry (SPEC §10). An append refreshes the TTL of all the session's long-lived keys
  (stream, session hash, transcript, runs index, store hash, client tools, skills, policy, approvals, the
  two stored-bytes keys, the finished runs' records; one PEXPIRE each; keys
  not created yet are skipped by Redis) to SESSION_TTL_MS + REFRESH_SLACK_MS, and the run hash of
  a run event with them: the session expires between SESSION_TTL_MS and SESSION_TTL_MS +
  REFRESH_SLACK_MS (min(60 s, 1% of the TTL)) after its last write, never before. The refresh of
  the session's keys is skipped when the session hash still has at least the TTL the append asks
  for (it was refreshed less than REFRESH_SLACK_MS ago) and the append may not have created a key:
  not a new session (HSETNX of createdAt), not `store.committed`, `tools.registered` or
  `skills.registered`, and no transcript entry, stored-bytes bucket or runs index (a
  `run.requested` into an empty one) that made a new key. So a busy session's appends (run
  requests, starts and ends, tool calls) cost one PTTL, not a dozen PEXPIREs; the later appends of
  one script call not even that (the TTL the first left is kept for them, and the run hash's when
  it is the same). A TTL is never shortened (the
  session hash's PTTL is the floor), and an event of a live run (not terminal) raises it to at
  least LIVE_RUN_MAX_IDLE_MS: a live run writes again within that (else it is dead, see
  retention.lua), so a session and its run hashes always outlive their live runs, parked ones
  included. A terminal event gives the run hash min(RETENTION_MS, the session's TTL), unless the
  run was folded into its record (fold-run.lua: `run_folded`), which lives with the session's
  keys. The store and tools keys are named from K[2] (`<base>:session` → `<base>:store`,
  `<base>:tools`), in the session's slot. Writes that bypass append_event touch only keys that already have a TTL
  (reserve-resume and give-back-resume: the run hash) or set their own (request-run: the
  idempotency key lives min(its 24 h, the session's TTL), read from `session_ttl_ms`).

    created_key: set by whatever part of the append made a key (a new session, a transcript
      list, a stored-bytes bucket), so that expire_session refreshes then.
    expire_session(K, ev): refreshes what needs it; returns the session's TTL in ms, which
      append_event keeps in `session_ttl_ms` for the script that called it.
]]
--- @include "settings"
--- @include "session-keys"

-- How much longer than asked a refresh sets, so the next appends may skip it.
local REFRESH_SLACK_MS = math.min(60000, math.floor(SESSION_TTL_MS / 100))
-- Events that may create a session key their append must give a TTL.
local CREATES_KEYS = { ['store.committed'] = true, ['tools.registered'] = true, ['skills.registered'] = true }

-- The session's TTL in ms after the last append_event (request-run caps its idempotency key by it).
local session_ttl_ms = SESSION_TTL_MS

-- Set when this append created a key (a new session, a transcript list): expire_session refreshes then.
local created_key = false

-- Set by fold_run (fold-run.lua) when this append folded its run: its hash is gone.
local run_folded = false

-- What this script call's earlier appends left: the session hash's TTL in ms, and the run hash
-- key and TTL a live event gave (nothing else changes a TTL while the script runs).
local script_left = nil
local script_run_ttl = nil

-- Refreshes the TTL of the session's long-lived keys unless they are fresh, and of the run hash;
-- returns the session's TTL in ms.
local function expire_session(K, ev)
  local ttl = SESSION_TTL_MS
  local live = ev.runId ~= '' and not TERMINAL[ev.type]
  if live and LIVE_RUN_MAX_IDLE_MS > ttl then ttl = LIVE_RUN_MAX_IDLE_MS end
  local left = script_left or redis.call('PTTL', K[2])
  local fresh = left >= ttl and not created_key and not CREATES_KEYS[ev.type]
  local target = math.max(ttl + REFRESH_SLACK_MS, left)
  script_left = fresh and left or target
  if not fresh then
    local base = session_base(K)
    for _, key in ipairs({ K[1], K[2], K[4], K[5], base .. ':store', base .. ':tools',
      base .. ':skills', base .. ':skill-docs', base .. ':policy', base .. ':approvals', base .. ':stored-log',
      base .. ':stored-minutes', base .. ':past', base .. ':past-cut' }) do
      redis.call('PEXPIRE', key, int(target))
    end
  end
  if live then
    local run_ttl = K[3] .. ' ' .. int(target)
    if script_run_ttl ~= run_ttl then redis.call('PEXPIRE', K[3], int(target)) end
    script_run_ttl = run_ttl
  elseif ev.runId ~= '' and not run_folded then
    redis.call('PEXPIRE', K[3], int(math.min(RETENTION_MS, target)))
    script_run_ttl = nil
  end
  return math.max(ttl, left)
end
