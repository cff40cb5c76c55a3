--[[
  Record an exec refused on its input (SPEC §3 input rules: nothing ran) as `exec.rejected`, with
  transcript input and result marks. It is a failed cell of its session (SPEC §16): the count of
  failed cells in a row moves with it and its result gets its `repair` (includes/repair.lua).

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash (unused: run ''), KEYS[4] transcript,
      KEYS[5] runs index

      ARGV[1] input: the refused body's JSON (kept verbatim)
      ARGV[2] result: CodeModeResult JSON (kept verbatim, `repair` spliced in)
      ARGV[3..7] repair: mode, default repairAttempts, reasons (includes/repair.lua)

    Output:
      {1, eventId, repairJson|''}

    Events:
      exec.rejected
]]
--- @include "includes/append"
--- @include "includes/repair"

local result, repair, count = repair_decide(KEYS, repair_args(3), true, false, ARGV[2])
local id = append_event(KEYS, { type = 'exec.rejected', runId = '', epoch = 0, head = '{"call":"exec"}',
  raws = { { 'input', ARGV[1] }, { 'result', result } }, facts = { call = 'exec' } })
repair_keep(KEYS, count)
return { 1, id, repair }
