"""Reads template.yaml: the table definition (so tests and infrastructure cannot drift) and the routes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfnlint.decode.cfn_yaml import loads

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    template: dict[str, Any] = loads(path.read_text(encoding="utf-8"), str(path))
    return template


def table_definition(template: dict[str, Any], logical_id: str = "MemoryTable") -> dict[str, Any]:
    """CreateTable arguments from the template's table resource (moto ignores PITR and SSE there)."""
    props = template["Resources"][logical_id]["Properties"]
    definition = {
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    if "GlobalSecondaryIndexes" in props:
        definition["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    return definition


def ttl_attribute(template: dict[str, Any], logical_id: str = "MemoryTable") -> str:
    name: str = template["Resources"][logical_id]["Properties"]["TimeToLiveSpecification"]["AttributeName"]
    return name


def bus_name(template: dict[str, Any], stack_name: str, logical_id: str = "ChangeFeedBus") -> str:
    """The event bus's name as CloudFormation would give it, for a stack called `stack_name`."""
    name = template["Resources"][logical_id]["Properties"]["Name"]
    spelled: str = name["Fn::Sub"] if isinstance(name, dict) else name
    return spelled.replace("${AWS::StackName}", stack_name)


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    auth: str  # "jwt" | "iam" | "none"
    function: str
    code_dir: Path
    handler: str
    pattern: re.Pattern[str]

    @property
    def route_key(self) -> str:
        return f"{self.method} {self.path}"

    def match(self, method: str, path: str) -> dict[str, str] | None:
        if method != self.method:
            return None
        found = self.pattern.fullmatch(path)
        return None if found is None else found.groupdict()


def _auth_kind(event_props: dict[str, Any]) -> str:
    authorizer = (event_props.get("Auth") or {}).get("Authorizer")
    if authorizer == "AWS_IAM":
        return "iam"
    if authorizer == "NONE":
        return "none"
    return "jwt"


def routes(template: dict[str, Any], root: Path = ROOT) -> list[Route]:
    found = []
    for logical_id, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        for event in (props.get("Events") or {}).values():
            if event.get("Type") != "HttpApi":
                continue
            eprops = event["Properties"]
            path = eprops["Path"]
            regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(path))
            found.append(
                Route(
                    method=eprops["Method"].upper(),
                    path=path,
                    auth=_auth_kind(eprops),
                    function=logical_id,
                    code_dir=root / props["CodeUri"],
                    handler=props["Handler"],
                    pattern=re.compile(regex),
                )
            )
    return found
