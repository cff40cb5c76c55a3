"""The client against the live service's ``/openapi.json``: every route it calls exists there with
the same method, operation id and answer, every ``/v1`` operation there has a route here, and every
field a model declares (nested models included) exists in the component it stands for."""

from __future__ import annotations

import types
import typing
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from codemode_client.models.components import COMPONENT_MODELS, INLINE_MODELS
from codemode_client.routes import ROUTES

METHODS = ("get", "put", "post", "delete", "patch")


@pytest.fixture(scope="module")
def document(base_url: str) -> dict[str, Any]:
    response = httpx.get(f"{base_url}/openapi.json", timeout=30)
    response.raise_for_status()
    return response.json()


def test_every_route_of_the_client_is_in_the_document(document: dict[str, Any]) -> None:
    problems = []
    for route in ROUTES.values():
        operation = document["paths"].get(route.path, {}).get(route.method.lower())
        if operation is None:
            problems.append(f"{route.method} {route.path} is not in /openapi.json")
            continue
        if operation.get("operationId") != route.operation_id:
            problems.append(f"{route.method} {route.path} is {operation.get('operationId')}, not {route.operation_id}")
        content = _success_content(operation)
        if route.response is None:
            if "text/event-stream" not in content:
                problems.append(f"{route.operation_id} does not answer an event stream")
        elif route.response in INLINE_MODELS:
            problems += _field_problems(
                INLINE_MODELS[route.response], content["application/json"]["schema"], document, route.response
            )
        elif (
            content.get("application/json", {}).get("schema", {}).get("$ref")
            != f"#/components/schemas/{route.response}"
        ):
            problems.append(f"{route.operation_id} does not answer {route.response}")
    assert problems == []


def test_every_v1_operation_of_the_document_has_a_route(document: dict[str, Any]) -> None:
    declared = {(route.method.lower(), route.path) for route in ROUTES.values()}
    missing = [
        f"{method.upper()} {path} ({operation.get('operationId')})"
        for path, item in document["paths"].items()
        if path.startswith("/v1/")
        for method, operation in item.items()
        if method in METHODS and (method, path) not in declared
    ]
    assert missing == []


def test_every_model_field_is_in_its_component(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    problems = []
    for name, models in COMPONENT_MODELS.items():
        if name not in schemas:
            problems.append(f"component {name} is not in /openapi.json")
            continue
        for model in models:
            problems += _field_problems(model, schemas[name], document, name)
    assert problems == []


def test_a_check_of_a_field_the_document_lacks_fails(document: dict[str, Any]) -> None:
    class Drifted(COMPONENT_MODELS["SessionDeleted"][0]):  # type: ignore[misc,valid-type]
        vanished_field: int = 0

    assert _field_problems(
        Drifted, document["components"]["schemas"]["SessionDeleted"], document, "SessionDeleted"
    ) == ["SessionDeleted.vanishedField (Drifted) is not in /openapi.json"]


def _success_content(operation: dict[str, Any]) -> dict[str, Any]:
    for status, answer in operation.get("responses", {}).items():
        if status.startswith("2"):
            return answer.get("content", {})
    return {}


def _field_problems(model: type[BaseModel], schema: dict[str, Any], document: dict[str, Any], where: str) -> list[str]:
    properties = _properties(schema, document)
    problems = []
    for name, field in model.model_fields.items():
        alias = field.alias or name
        if alias not in properties:
            problems.append(f"{where}.{alias} ({model.__name__}) is not in /openapi.json")
            continue
        for nested in _nested_models(field.annotation):
            problems += _field_problems(nested, {"anyOf": properties[alias]}, document, f"{where}.{alias}")
    return problems


def _properties(schema: Any, document: dict[str, Any], seen: frozenset[str] = frozenset()) -> dict[str, list[Any]]:
    """Every property a value of ``schema`` may have, through ``$ref``, unions and array items."""
    found: dict[str, list[Any]] = {}
    if isinstance(schema, list):
        for each in schema:
            _merge(found, _properties(each, document, seen))
        return found
    if not isinstance(schema, dict):
        return found
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        target = document
        for part in ref.removeprefix("#/").split("/"):
            target = target[part]
        _merge(found, _properties(target, document, seen | {ref}))
    for key, sub in schema.get("properties", {}).items():
        found.setdefault(key, []).append(sub)
    for keyword in ("anyOf", "oneOf", "allOf"):
        _merge(found, _properties(schema.get(keyword, []), document, seen))
    _merge(found, _properties(schema.get("items"), document, seen))
    return found


def _merge(into: dict[str, list[Any]], more: dict[str, list[Any]]) -> None:
    for key, subs in more.items():
        into.setdefault(key, []).extend(subs)


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        args = args[:1]
    elif not args and isinstance(annotation, types.UnionType):
        args = annotation.__args__
    return [model for arg in args for model in _nested_models(arg)]
