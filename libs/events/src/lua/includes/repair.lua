--[[
  SPEC §16 "Bounded repair", for the scripts that end a cell (finish-run.lua, reject-exec.lua): the
  session's count of failed cells in a row (`repairFailures` in its hash, in the same slot as its
  runs) moves with the cell's end, and a failed result gets its `repair`, in one script call.

    repair_args(from): reads ARGV[from..from+4]: mode, default repairAttempts, and the three
      reasons (allowed, dispatched, exhausted; SPEC's sentences, from libs/contracts).
      mode: 'cell' (a cell's outcome: completed resets the count, failed counts),
            'host' (a failure the host decided: counts only once a tool call was dispatched),
            '' (neither: an abort).
    repair_decide(K, args, failed, dispatched, result): writes nothing; returns the result JSON as
      recorded and answered, the repair JSON it carries ('' for none), and the count to keep
      (false: untouched, 0: reset).
    repair_keep(K, count): writes the count; called once the event is appended (a refused append
      raises before, and a script's writes before an error are not undone).
]]

local function repair_args(from)
  return { mode = ARGV[from], default = tonumber(ARGV[from + 1]), allowed = ARGV[from + 2],
    dispatched = ARGV[from + 3], exhausted = ARGV[from + 4] }
end

local function repair_decide(K, args, failed, dispatched, result)
  if args.mode == '' or (args.mode == 'host' and not dispatched) then return result, '', false end
  if not failed then return result, '', 0 end
  local n = (tonumber(redis.call('HGET', K[2], 'repairFailures')) or 0) + 1
  local attempts = tonumber(redis.call('HGET', K[2], 'repairAttempts')) or args.default
  local allowed = (not dispatched) and n <= attempts
  local reason = args.exhausted
  if dispatched then reason = args.dispatched elseif allowed then reason = args.allowed end
  local repair = '{"allowed":' .. tostring(allowed) .. ',"remainingAttempts":' .. math.max(0, attempts - n) ..
    ',"reason":' .. cjson.encode(reason) .. '}'
  -- Spliced, not re-encoded: the result stays verbatim (cjson would rewrite numbers and empty arrays).
  return string.sub(result, 1, -2) .. ',"repair":' .. repair .. '}', repair, n
end

local function repair_keep(K, count)
  if count == 0 then redis.call('HDEL', K[2], 'repairFailures')
  elseif count then redis.call('HSET', K[2], 'repairFailures', count) end
end
