"""Every route this client calls, as ``/openapi.json`` names it: the single list the clients send
through and the drift test checks against the live service (operation id, method, path, answer)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    operation_id: str
    method: str
    path: str
    #: Model of the 2xx JSON answer (a component's name, or one of INLINE_MODELS); ``None`` for a stream.
    response: str | None


_SESSION = "/v1/sessions/{sid}"
_RUN = _SESSION + "/runs/{runId}"

ROUTES: dict[str, Route] = {
    route.operation_id: route
    for route in [
        Route("listSessions", "GET", "/v1/sessions", "SessionList"),
        Route("putSession", "PUT", _SESSION, "SessionConfig"),
        Route("getSession", "GET", _SESSION, "SessionView"),
        Route("deleteSession", "DELETE", _SESSION, "SessionDeleted"),
        Route("exec", "POST", _SESSION + "/exec", "CodeModeResult"),
        Route("wait", "POST", _SESSION + "/wait", "CodeModeResult"),
        Route("listRuns", "GET", _SESSION + "/runs", "RunList"),
        Route("getRun", "GET", _RUN, "RunView"),
        Route("abortRun", "DELETE", _RUN, "CodeModeResult"),
        Route("submitToolResults", "POST", _RUN + "/tool-results", "ToolResultsAccepted"),
        Route("putTools", "PUT", _SESSION + "/tools", "ToolsView"),
        Route("getTools", "GET", _SESSION + "/tools", "ToolsView"),
        Route("getToolDefinitions", "GET", _SESSION + "/tools/definitions", "ToolDefinitions"),
        Route("listTenantTools", "GET", "/v1/tools", "TenantToolList"),
        Route("putTenantTool", "PUT", "/v1/tools/{name}", "TenantTool"),
        Route("deleteTenantTool", "DELETE", "/v1/tools/{name}", "TenantToolDeleted"),
        Route("listEvents", "GET", _SESSION + "/events", "EventPage"),
        Route("getTranscript", "GET", _SESSION + "/transcript", "Transcript"),
        Route("getStore", "GET", _SESSION + "/store", "StoreView"),
        Route("getFleet", "GET", "/v1/fleet", "FleetView"),
        Route("shellExec", "POST", _SESSION + "/shell/exec", "ShellAnswer"),
        Route("process", "POST", _SESSION + "/process", "ShellAnswer"),
        Route("getPolicy", "GET", "/v1/policy", "Policy"),
        Route("putPolicy", "PUT", "/v1/policy", "Policy"),
        Route("listTenantApprovals", "GET", "/v1/approvals", "TenantApprovalList"),
        Route("listApprovals", "GET", _SESSION + "/approvals", "ApprovalList"),
        Route("decideApproval", "POST", _SESSION + "/approvals/{approvalId}", "ApprovalDecided"),
        Route("listNodes", "GET", "/v1/nodes", "NodeList"),
        Route("connectNode", "POST", "/v1/nodes/connect", None),
        Route("answerNodeInvocation", "POST", "/v1/nodes/{id}/results", "NodeResultAccepted"),
        Route("removeNode", "DELETE", "/v1/nodes/{id}", "NodeDeleted"),
        Route("listSkills", "GET", "/v1/skills", "SkillList"),
        Route("putSkill", "PUT", "/v1/skills/{name}", "Skill"),
        Route("deleteSkill", "DELETE", "/v1/skills/{name}", "SkillDeleted"),
        Route("putSessionSkills", "PUT", _SESSION + "/skills", "SkillList"),
    ]
}
