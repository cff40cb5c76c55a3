"""Which model stands for which component schema of ``/openapi.json``: what the clients parse
answers with and what the drift test compares, field by field, with the live document."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from . import platform, runs, sessions

#: Component name → the models declaring it (a union's variants are listed one by one).
COMPONENT_MODELS: dict[str, tuple[type[BaseModel], ...]] = {
    "CodeModeExecInput": (runs.CodeModeExecInput,),
    "WaitInput": (runs.WaitInput,),
    "ToolResultsInput": (runs.ToolResultsInput,),
    "ToolResultsAccepted": (runs.ToolResultsAccepted,),
    "CodeModeResult": (runs.CompletedResult, runs.WaitingResult, runs.FailedResult),
    "RunList": (runs.RunList,),
    "RunView": (runs.RunView,),
    "SessionPutInput": (sessions.SessionPutInput,),
    "SessionConfig": (sessions.SessionConfig,),
    "SessionView": (sessions.SessionView,),
    "SessionDeleted": (sessions.SessionDeleted,),
    "SessionList": (sessions.SessionList,),
    "Event": (sessions.Event,),
    "EventPage": (sessions.EventPage,),
    "Transcript": (sessions.Transcript,),
    "StoreView": (sessions.StoreView,),
    "ClientToolsPut": (platform.ClientToolsPut,),
    "ToolsView": (platform.ToolsView,),
    "TenantToolPut": (platform.TenantToolPut,),
    "TenantTool": (platform.TenantTool,),
    "TenantToolList": (platform.TenantToolList,),
    "TenantToolDeleted": (platform.TenantToolDeleted,),
    "PolicyInput": (platform.PolicyInput,),
    "Policy": (platform.Policy,),
    "ApprovalList": (platform.ApprovalList,),
    "TenantApprovalList": (platform.TenantApprovalList,),
    "ApprovalDecisionInput": (platform.ApprovalDecisionInput,),
    "ApprovalDecided": (platform.ApprovalDecided,),
    "NodeList": (platform.NodeList,),
    "NodeConnectInput": (platform.NodeConnectInput,),
    "NodeResultInput": (platform.NodeResultInput,),
    "NodeResultAccepted": (platform.NodeResultAccepted,),
    "NodeDeleted": (platform.NodeDeleted,),
    "Skill": (platform.Skill,),
    "SkillList": (platform.SkillList,),
    "TenantSkillPut": (platform.TenantSkillPut,),
    "SessionSkillsPut": (platform.SessionSkillsPut,),
    "SkillDeleted": (platform.SkillDeleted,),
    "ShellExecInput": (platform.ShellExecInput,),
    "ProcessInput": (platform.ProcessInput,),
    "ShellAnswer": (platform.ShellAnswer,),
    "FleetView": (platform.FleetView,),
    "ApiErrorBody": (platform.ApiErrorBody,),
}

#: Answers the document describes inline rather than as a component (named here, not there).
INLINE_MODELS: dict[str, type[BaseModel]] = {"ToolDefinitions": platform.ToolDefinitions}


def parse_answer(name: str, body: Any) -> Any:
    """The answer ``body`` as the model named ``name`` (a result union by its ``status``)."""
    if name == "CodeModeResult":
        return runs.CODE_MODE_RESULT.validate_python(body)
    if name in INLINE_MODELS:
        return INLINE_MODELS[name].model_validate(body)
    (model,) = COMPONENT_MODELS[name]
    return model.model_validate(body)
