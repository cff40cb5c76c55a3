"""Requests as the clients build them, before anything is sent."""

from codemode_client import calls


def test_a_body_leaves_out_what_was_not_given() -> None:
    built = calls.exec_cell("s1", "return 1", "t", None, True, None, "key-1")
    assert (built.route.method, built.path) == ("POST", "/v1/sessions/s1/exec")
    assert built.body == {"title": "t", "code": "return 1", "restartSafe": True}
    assert built.headers == {"Idempotency-Key": "key-1"}
    assert calls.exec_cell("s1", "return 1", "t", None, None, None, None).headers == {}


def test_a_field_set_to_none_is_sent_as_null() -> None:
    assert calls.put_session("s1", {"agent_id": None, "code_mode": {"timeout_ms": 5000}}).body == {
        "agentId": None,
        "codeMode": {"timeoutMs": 5000},
    }


def test_ids_are_one_path_segment_each() -> None:
    assert calls.get_run("a/b?c", "cm_1").path == "/v1/sessions/a%2Fb%3Fc/runs/cm_1"
    # A dots-only id reaches the service (which refuses it) instead of being resolved as `..`.
    assert calls.get_session("..").path == "/v1/sessions/%2E%2E"
    assert calls.list_events("s 1", None, 5).query == {"limit": "5"}
