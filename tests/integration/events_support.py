"""The fixtures events/ names (events/README.md), laid out on a fresh table as the services write them, and
what the OpenAPI document promises each route answers: what tests/integration/test_events.py runs on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

from workspace_memory.bootstrap import Services
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.clock import iso
from workspace_memory.kernel.terms import EntryScope, EntryType, ExportScope, ExportStatus, PageScope
from workspace_memory.pages.service import PageService
from workspace_memory.store import keys
from workspace_memory.store.erasure_records import COMPLETED, ErasureRecord, requester_digest
from workspace_memory.store.export_records import ExportRecord
from workspace_memory.turns.admission import RETENTION_SECONDS, AdmissionRef, credential_context, credential_hash
from workspace_memory.turns.turn_contract import turn_id_for
from workspace_memory.workspaces.keysessions import TTL_GRACE_SECONDS

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
OPENAPI = ROOT / "functions" / "docs" / "openapi.json"

WS = "ws_events0000000000000000"
OWNER = "user-owner"
CONV = "conv-events"
KEY_SESSION = "ks_events0000000000000000"  # revoked by key-session-revoke.json
LIVE_KEY_SESSION = "ks_events0000000000000001"  # automation-admission.json admits under it
SESSION = "sess-events"
ALL_SCOPES = ["memory:read", "memory:write", "notes"]
CREDENTIAL = "cred-events"
ADMISSION_ID = AdmissionRef(CONV, WS, OWNER, None).encode("adm_events0000000000000000")
FAR_FUTURE_SECONDS = 365 * 86400

# The authority the seeded admission was "admitted under" is the state the events before recall/capture
# leave behind: ai-set bumps consent 0 -> 1, memory-policy-put sets auto at revision 1, memory-clear bumps
# the clear generation 0 -> 1.
ADMITTED_CONSENT_REVISION = 1
ADMITTED_POLICY_REVISION = 1
ADMITTED_CLEAR_GENERATION = 1

TURN_ID = turn_id_for(CONV, "events-turn-1")  # the id turn-get.json names: derived from turn-start's key

ENTRY_ID = "en_events0000000000000000"
CANDIDATES = ("ec_events0000000000000000", "ec_events0000000000000001")
PAGE_ID = "pg_events0000000000000000"
EDITOR = "user-editor"
ERASURE_ID = "er_events0000000000000000"  # a completed erasure (erasure-get.json, automation-erasure-step.json)
EXPORT_ID = "ex_eeee00000000000000000000"
"""The seeded export the export events name (a `me` export of the owner, running)."""


def seed(svc: Services) -> None:
    """The fixtures the events name, laid out as the services write them (keys.py)."""
    now = svc.clock.now()
    at = iso(now)
    far = int(now) + FAR_FUTURE_SECONDS
    branch_key_id = svc.key_store.create_branch_key(WS)  # as create_workspace does, before the META
    svc.table.put(
        {
            **keys.as_key(keys.meta(WS)),
            "workspaceId": WS,
            "branchKeyId": branch_key_id,
            "name": "Events workspace",
            "ownerId": OWNER,
            "shareType": "shared",
            "aiEnabled": False,
            "consentRevision": 0,
            "createdAt": at,
        }
    )
    owner = {**keys.as_key(keys.member(WS, OWNER)), "userId": OWNER, "role": "owner", "canWrite": True}
    svc.table.put({**owner, "updatedAt": at})
    for key_session in (KEY_SESSION, LIVE_KEY_SESSION):
        svc.table.put(
            {
                **keys.as_key(keys.key_session(WS, key_session)),
                "keySessionId": key_session,
                "openedBy": OWNER,
                "scopes": ALL_SCOPES,
                "expiresAt": far,
                "ttl": far + TTL_GRACE_SECONDS,
            }
        )
    nonce_hash = credential_hash(CREDENTIAL)
    svc.table.put(
        {
            **keys.as_key(keys.admission(ADMISSION_ID)),
            "admissionId": ADMISSION_ID,
            "conversationId": CONV,
            "workspaceId": WS,
            "userId": OWNER,
            "mode": "auto",
            "policyRevision": ADMITTED_POLICY_REVISION,
            "clearGeneration": ADMITTED_CLEAR_GENERATION,
            "consentRevision": ADMITTED_CONSENT_REVISION,
            "scopes": ALL_SCOPES,
            "sessionId": SESSION,
            "nonceHash": nonce_hash,
            "credentialCiphertext": svc.cipher.encrypt(CREDENTIAL.encode(), credential_context(WS, ADMISSION_ID)),
            "expiresAt": far,
            "status": "admitted",
            "createdAt": at,
            "ttl": far + RETENTION_SECONDS,
        }
    )
    svc.table.put(
        {
            **keys.as_key(keys.credential(CONV)),
            "admissionId": ADMISSION_ID,
            "nonceHash": nonce_hash,
            "workspaceId": WS,
            "expiresAt": far,
            "ttl": far + RETENTION_SECONDS,
        }
    )
    svc.table.put({**keys.as_key(keys.conversation_owner(CONV)), "workspaceId": WS, "userId": OWNER, "createdAt": at})
    export = ExportRecord(EXPORT_ID, WS, ExportScope.ME, OWNER, ExportStatus.RUNNING, at, far)
    svc.table.put(export.to_item())
    seed_entries(svc, at)
    erased = ErasureRecord(
        erasure_id=ERASURE_ID,
        pseudonym="erased-000000000000000000000000",
        requested_by=OWNER,
        requester=requester_digest(ERASURE_ID, OWNER),
        requested_at=at,
        subject=None,
        status=COMPLETED,
        completed_at=at,
        deleted={"member": 1},
    )
    svc.table.put(erased.to_item(WS))


def seed_entries(svc: Services, at: str) -> None:
    """The entry fixtures, written through the entry service with the events' fixed ids."""
    editor = {**keys.as_key(keys.member(WS, EDITOR)), "userId": EDITOR, "role": "editor", "canWrite": True}
    svc.table.put({**editor, "updatedAt": at})
    text = EntryText("Deploy day", "We deploy on Fridays", "We deploy on Fridays.", key="ops/deploy-day")
    ids = iter([ENTRY_ID, *CANDIDATES])
    mint = mock.Mock(side_effect=lambda _prefix: next(ids))  # entries and candidates draw from one list
    with (
        mock.patch("workspace_memory.entries.writes.new_id", mint),
        mock.patch("workspace_memory.entries.candidates.new_id", mint),
    ):
        svc.entries.create(OWNER, WS, Draft(EntryType.FACT, text))
        for title in ("Use feature flags", "Prefer tabs"):
            svc.entries.propose(OWNER, WS, Draft(EntryType.PREFERENCE, EntryText(title, title, "")))
    svc.entries.create(EDITOR, WS, Draft(EntryType.FACT, EntryText("Mine", "mine", ""), EntryScope.MEMBER))
    with mock.patch("workspace_memory.pages.service.new_id", return_value=PAGE_ID):
        PageService(svc.table, svc.cipher, svc.clock).create(OWNER, WS, PageScope.WORKSPACE, "topic", "Deploys", None)


def documented_statuses(route_key: str) -> set[int]:
    """The statuses the OpenAPI document (functions/docs/openapi.json) lists for a route (`GET /v1/...`)."""
    method, _, path = route_key.partition(" ")
    document: dict[str, Any] = json.loads(OPENAPI.read_text(encoding="utf-8"))
    return {int(status) for status in document["paths"][path][method.lower()]["responses"]}
