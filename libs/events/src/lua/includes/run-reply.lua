--[[
  The answer pushed to the caller waiting on a run (RunReplies; resultReply is the same message
  built in TypeScript): `{"kind":"result","runId":…,"result":…}` on the caller's channel, with the
  result's JSON text spliced verbatim (never decoded here: see append.lua).

    publish_result(channel, runId, result)
]]
local function publish_result(channel, runId, result)
  redis.call('SPUBLISH', channel, '{"kind":"result","runId":' .. cjson.encode(runId) .. ',"result":' .. result .. '}')
end
