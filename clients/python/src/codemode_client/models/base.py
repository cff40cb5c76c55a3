"""The base of every model: camelCase on the wire, snake_case in Python."""

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """A JSON object of the API. Fields the service adds later are kept (``extra="allow"``), so an
    older client reads a newer service; the drift test checks that every declared field exists in
    the service's ``/openapi.json``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def to_json_body(self) -> dict:
        """The request body as the service takes it: camelCase keys, fields never set left out, and
        a field set to ``None`` sent as ``null`` (``agent_id=None`` clears a session's agentId)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
