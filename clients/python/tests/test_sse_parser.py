"""The SSE parser, fed chunks split anywhere (the network decides where)."""

from codemode_client.sse import SseMessage, SseParser

STREAM = ': streaming session events\r\n\r\nid: 1-0\r\nevent: event\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: ping\n\nid: 2-0\ndata: x\n\n'
EXPECTED = [SseMessage("1-0", "event", '{"a":\n1}'), SseMessage("2-0", "message", "x")]


def test_whole_stream() -> None:
    assert SseParser().push(STREAM) == EXPECTED


def test_every_split_point_gives_the_same_messages() -> None:
    for cut in range(len(STREAM)):
        parser = SseParser()
        assert parser.push(STREAM[:cut]) + parser.push(STREAM[cut:]) == EXPECTED, cut


def test_one_character_at_a_time() -> None:
    parser = SseParser()
    assert [m for ch in STREAM for m in parser.push(ch)] == EXPECTED
