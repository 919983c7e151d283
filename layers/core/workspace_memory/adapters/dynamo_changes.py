"""The domain's changes (`workspace_memory.store.changes`) in DynamoDB's dialect: one TransactWriteItems action each.

This is the only place condition and update expressions are spelled. `IN` and comparisons are false on a
missing attribute or item, which is what every "still holds" check wants.
"""

from __future__ import annotations

from typing import Any

from workspace_memory.adapters.dynamo_entry_marks import agent_write, mark_entry_head
from workspace_memory.adapters.dynamo_erasure import erasure_action
from workspace_memory.adapters.dynamo_export_changes import export_to_dynamo
from workspace_memory.store import changes as ch
from workspace_memory.store import keys

_READ_ONLY = "read_only"


STATUS = {"#status": "status"}


def _check(
    key: keys.Key, condition: str, values: dict[str, Any], names: dict[str, str] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"Key": keys.as_key(key), "ConditionExpression": condition}
    if values:
        body["ExpressionAttributeValues"] = values
    if names:
        body["ExpressionAttributeNames"] = names
    return {"ConditionCheck": body}


def _put(item: dict[str, Any], condition: str | None = None, values: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"Item": item}
    if condition is not None:
        body["ConditionExpression"] = condition
    if values:
        body["ExpressionAttributeValues"] = values
    return {"Put": body}


_ABSENT = "attribute_not_exists(pk)"


def _retention_is(days: int, agent_days: int | None = None) -> tuple[str, dict[str, Any]]:
    """The condition "the workspace's retention is `days`" (and its agent window `agent_days`, when given): a
    missing attribute is the default."""
    condition, values = _window_is("historyDays", ":days", days, ch.DEFAULT_HISTORY_DAYS)
    if agent_days is None:
        return condition, values
    agent, more = _window_is("agentDays", ":agentDays", agent_days, ch.DEFAULT_AGENT_DAYS)
    return f"{condition} AND {agent}", {**values, **more}


def _window_is(name: str, value: str, days: int, default: int) -> tuple[str, dict[str, Any]]:
    if days == default:
        return f"(attribute_not_exists({name}) OR {name} = {value})", {value: days}
    return f"{name} = {value}", {value: days}


def to_dynamo(change: ch.Change) -> dict[str, Any]:
    """The TransactWriteItems action (without TableName) that says `change`."""
    match change:
        case ch.Create(item=item) | ch.MoveHead(item=item, base=0) | ch.ReplaceRevision(item=item, expected=0):
            return _put(item, _ABSENT)
        case ch.Put(item=item):
            return _put(item)
        case ch.MoveHead(item=item, base=base):
            return _put(item, "headVersion = :base AND tombstone = :false", {":base": base, ":false": False})
        case ch.MemberCanWrite(workspace_id=ws, user_id=user):
            return _check(keys.member(ws, user), "canWrite = :true", {":true": True})
        case ch.BumpClearGeneration(workspace_id=ws, seen=seen):
            return {
                "Update": {
                    "Key": keys.as_key(keys.policy(ws)),
                    "UpdateExpression": "SET clearGeneration = :next, #mode = if_not_exists(#mode, :ro), "
                    "policyRevision = if_not_exists(policyRevision, :zero)",
                    "ConditionExpression": "attribute_not_exists(pk) OR clearGeneration = :seen",
                    "ExpressionAttributeNames": {"#mode": "mode"},
                    "ExpressionAttributeValues": {":next": seen + 1, ":seen": seen, ":ro": _READ_ONLY, ":zero": 0},
                }
            }
        case ch.ClearGenerationIs(workspace_id=ws, generation=None):
            return _check(keys.policy(ws), _ABSENT, {})
        case ch.ClearGenerationIs(workspace_id=ws, generation=generation):
            return _check(keys.policy(ws), "clearGeneration = :gen", {":gen": generation})
        case ch.SetPolicyMode(workspace_id=ws, mode=mode, expected=expected, at=at, by=by):
            return {
                "Update": {
                    "Key": keys.as_key(keys.policy(ws)),
                    "UpdateExpression": "SET #mode = :mode, policyRevision = :next, "
                    "clearGeneration = if_not_exists(clearGeneration, :zero), updatedAt = :at, updatedBy = :by",
                    "ConditionExpression": "attribute_not_exists(pk) AND :seen = :zero OR policyRevision = :seen",
                    "ExpressionAttributeNames": {"#mode": "mode"},
                    "ExpressionAttributeValues": {
                        ":mode": mode,
                        ":next": expected + 1,
                        ":seen": expected,
                        ":zero": 0,
                        ":at": at,
                        ":by": by,
                    },
                }
            }
        case ch.PolicyIs(workspace_id=ws, revision=0):
            return _check(keys.policy(ws), _ABSENT, {})
        case ch.PolicyIs(workspace_id=ws, mode=mode, revision=revision, clear_generation=generation):
            return _check(
                keys.policy(ws),
                "#mode = :mode AND policyRevision = :rev AND clearGeneration = :gen",
                {":mode": mode, ":rev": revision, ":gen": generation},
                {"#mode": "mode"},
            )
        case ch.ConsentIs(workspace_id=ws, consent_revision=consent, history_days=days, agent_days=agent_days):
            condition, values = "aiEnabled = :true AND consentRevision = :consent", {":true": True, ":consent": consent}
            if days is not None:
                retention, more = _retention_is(days, agent_days)
                condition, values = f"{condition} AND {retention}", {**values, **more}
            return _check(keys.meta(ws), condition, values)
        case ch.RetentionIs(workspace_id=ws, history_days=days, agent_days=agent_days):
            retention, values = _retention_is(days, agent_days)
            return _check(keys.meta(ws), retention, values)
        case ch.SetRetention(workspace_id=ws, history_days=days, agent_days=agent_days):
            given = {"historyDays": days, "agentDays": agent_days}
            sets = {name: value for name, value in given.items() if value is not None}
            return {
                "Update": {
                    "Key": keys.as_key(keys.meta(ws)),
                    "UpdateExpression": "SET " + ", ".join(f"{name} = :{name}" for name in sets),
                    "ConditionExpression": "attribute_exists(pk)",
                    "ExpressionAttributeValues": {f":{name}": value for name, value in sets.items()},
                }
            }
        case ch.MemberIsOwner(workspace_id=ws, user_id=user):
            return _check(keys.member(ws, user), "#role = :owner", {":owner": "owner"}, {"#role": "role"})
        case ch.HeadAt(workspace_id=ws, version=version):
            return _check(
                keys.head(ws), "headVersion = :version AND tombstone = :false", {":version": version, ":false": False}
            )
        case ch.ExpireVersion(workspace_id=ws, version=version):
            return {
                "Update": {
                    "Key": keys.as_key(keys.version(ws, version)),
                    "UpdateExpression": "SET #ttl = :ttl, supersededAt = :at",
                    "ConditionExpression": "attribute_exists(pk) AND (attribute_not_exists(#ttl) OR #ttl > :now)",
                    "ExpressionAttributeNames": {"#ttl": "ttl"},  # TTL is a reserved word
                    "ExpressionAttributeValues": {":ttl": change.ttl, ":at": change.superseded_at, ":now": change.now},
                }
            }
        case ch.PurgeVersion(workspace_id=ws, version=version, at=at, by=by):
            return {
                "Update": {
                    "Key": keys.as_key(keys.version(ws, version)),
                    "UpdateExpression": "REMOVE ciphertext SET purgedAt = :at, purgedBy = :by",
                    "ConditionExpression": "attribute_exists(pk)",
                    "ExpressionAttributeValues": {":at": at, ":by": by},
                }
            }
        case ch.SetAi(workspace_id=ws, enabled=enabled, seen=seen):
            return {
                "Update": {
                    "Key": keys.as_key(keys.meta(ws)),
                    "UpdateExpression": "SET aiEnabled = :e, consentRevision = :next",
                    "ConditionExpression": "consentRevision = :seen",
                    "ExpressionAttributeValues": {":e": enabled, ":next": seen + 1, ":seen": seen},
                }
            }
        case ch.CredentialHeldBy(conversation_id=conv, admission_id=adm, nonce_hash=nonce, now=now):
            return _check(
                keys.credential(conv),
                "admissionId = :adm AND nonceHash = :nonce AND expiresAt > :now",
                {":adm": adm, ":nonce": nonce, ":now": now},
            )
        case ch.ConsumeAdmission():
            return {
                "Update": {
                    "Key": keys.as_key(keys.admission(change.admission_id)),
                    "UpdateExpression": "SET #status = :committed, captureRequestHash = :hash, "
                    "captureReceipt = :receipt",
                    "ConditionExpression": "#status = :admitted AND expiresAt > :now AND #mode = :mode "
                    "AND workspaceId = :ws AND userId = :user",
                    "ExpressionAttributeNames": {"#status": "status", "#mode": "mode"},
                    "ExpressionAttributeValues": {
                        ":committed": "committed",
                        ":admitted": "admitted",
                        ":hash": change.request_hash,
                        ":receipt": change.receipt,
                        ":now": change.now,
                        ":mode": change.mode,
                        ":ws": change.workspace_id,
                        ":user": change.user_id,
                    },
                }
            }
        case ch.AdmissionLive():
            return _check(
                keys.admission(change.admission_id),
                "#status IN (:admitted, :committed) AND expiresAt > :now AND #mode = :mode "
                "AND workspaceId = :ws AND userId = :user",
                {
                    ":admitted": "admitted",
                    ":committed": "committed",
                    ":now": change.now,
                    ":mode": change.mode,
                    ":ws": change.workspace_id,
                    ":user": change.user_id,
                },
                {"#status": "status", "#mode": "mode"},
            )
        case ch.ClaimConversation(item=item):
            return _put(
                item,
                f"{_ABSENT} OR (workspaceId = :ws AND userId = :user)",
                {":ws": item["workspaceId"], ":user": item["userId"]},
            )
        case ch.KeySessionLive(workspace_id=ws, key_session_id=ks, now=now):
            return _check(keys.key_session(ws, ks), "expiresAt > :now", {":now": now})
        case ch.KeySessionNotRevoked(workspace_id=ws, key_session_id=ks):
            return _check(keys.key_revocation(ws, ks), _ABSENT, {})
        case ch.ReplaceRevision(item=item, expected=expected):
            return _put(item, "revision = :expected", {":expected": expected})
        case ch.Delete(key=key) | ch.UnfileEntry(key=key):
            return {"Delete": {"Key": keys.as_key(key)}}
        case ch.DeletePage(key=page, expected=expected):
            values = {":expected": expected}
            return {
                "Delete": {
                    "Key": keys.as_key(page),
                    "ConditionExpression": "revision = :expected",
                    "ExpressionAttributeValues": values,
                }
            }
        case ch.RemoveMember() | ch.RewriteAttributes() | ch.CountErased() | ch.CompleteErasure():
            return erasure_action(change)
        case ch.TombstoneWorkspace(workspace_id=ws, by=by, at=at):
            return {
                "Update": {
                    "Key": keys.as_key(keys.meta(ws)),
                    "UpdateExpression": "SET deletedAt = :at, deletedBy = :by, aiEnabled = :false, "
                    "consentRevision = consentRevision + :one",
                    "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(deletedAt)",
                    "ExpressionAttributeValues": {":at": at, ":by": by, ":false": False, ":one": 1},
                }
            }
        case ch.TombstoneHead(workspace_id=ws):
            return {
                "Update": {
                    "Key": keys.as_key(keys.head(ws)),
                    "UpdateExpression": "SET tombstone = :true, headVersion = if_not_exists(headVersion, :zero)",
                    "ExpressionAttributeValues": {":true": True, ":zero": 0},
                }
            }
        case ch.MemberExists(workspace_id=ws, user_id=user):
            return _check(keys.member(ws, user), "attribute_exists(pk)", {})
        case ch.WorkspaceLive(workspace_id=ws):
            live = "attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(importingId)"
            return _check(keys.meta(ws), live, {})
        case ch.EntriesRevisionIs(workspace_id=ws, revision=revision):
            return _check(keys.entry_counter(ws), "entriesRevision = :revision", {":revision": revision})
        case ch.MoveEntryHead(item=item, base=base, pinned=pinned):
            condition = "revision = :base AND #status = :active"
            moved: dict[str, Any] = {":base": base, ":active": "active"}
            if pinned is not None:
                condition += " AND pinned = :true" if pinned else " AND attribute_not_exists(pinned)"
                moved |= {":true": True} if pinned else {}
            action = _put(item, condition, moved)
            action["Put"]["ExpressionAttributeNames"] = {"#status": "status"}
            return action
        case ch.MarkEntryHead():
            return mark_entry_head(change)
        case ch.EntryHeadIs(workspace_id=ws, entry_id=entry_id, revision=revision):
            condition = "revision = :revision AND #status = :active"
            return _check(keys.entry(ws, entry_id), condition, {":revision": revision, ":active": "active"}, STATUS)
        case ch.RetireEntryRevision():
            retire: dict[str, Any] = {
                ":superseded": "superseded",
                ":active": "active",
                ":into": change.into,
                ":at": change.at,
                ":ttl": change.ttl,
            }
            return {
                "Update": {
                    "Key": keys.as_key(keys.entry_revision(change.workspace_id, change.entry_id, change.revision)),
                    "UpdateExpression": "SET #status = :superseded, supersededByEntry = :into, supersededAt = :at, "
                    "#ttl = :ttl",
                    "ConditionExpression": "#status = :active",
                    "ExpressionAttributeNames": {"#status": "status", "#ttl": "ttl"},
                    "ExpressionAttributeValues": retire,
                }
            }
        case ch.EntryNotPinned(workspace_id=ws, entry_id=entry_id):
            return _check(keys.entry(ws, entry_id), "attribute_not_exists(pinned)", {})
        case ch.SourceNotForgotten(now=now):
            return _check(change.key, "attribute_not_exists(pk) OR #ttl <= :now", {":now": now}, {"#ttl": "ttl"})
        case ch.SupersedeEntryRevision():
            supersede: dict[str, Any] = {
                ":superseded": "superseded",
                ":by": change.by,
                ":at": change.at,
                ":ttl": change.ttl,
            }
            update = "SET #status = :superseded, supersededBy = :by, supersededAt = :at, #ttl = :ttl"
            return {
                "Update": {
                    "Key": keys.as_key(keys.entry_revision(change.workspace_id, change.entry_id, change.revision)),
                    "UpdateExpression": update,
                    "ConditionExpression": "attribute_exists(pk)",
                    "ExpressionAttributeNames": {"#status": "status", "#ttl": "ttl"},
                    "ExpressionAttributeValues": supersede,
                }
            }
        case ch.ExpireEntryRevision(workspace_id=ws, entry_id=entry_id, revision=revision):
            return {
                "Update": {
                    "Key": keys.as_key(keys.entry_revision(ws, entry_id, revision)),
                    "UpdateExpression": "SET #ttl = :ttl",
                    "ConditionExpression": "#status = :superseded AND attribute_exists(#ttl) AND #ttl > :now",
                    "ExpressionAttributeNames": {"#status": "status", "#ttl": "ttl"},
                    "ExpressionAttributeValues": {":superseded": "superseded", ":ttl": change.ttl, ":now": change.now},
                }
            }
        case ch.ExpireAgentEntry():
            condition = "revision = :revision AND #status = :active AND authorKind = :agent AND #ttl > :now"
            return {
                "Update": {
                    "Key": keys.as_key(change.key),
                    "UpdateExpression": "SET #ttl = :ttl",
                    "ConditionExpression": condition,
                    "ExpressionAttributeNames": {"#status": "status", "#ttl": "ttl"},
                    "ExpressionAttributeValues": {
                        ":revision": change.revision,
                        ":active": "active",
                        ":agent": "agent",
                        ":ttl": change.ttl,
                        ":now": change.now,
                    },
                }
            }
        case ch.TakeKeySlot(item=item, holder=holder):
            return _put(item, "entryId = :holder", {":holder": holder})
        case ch.CountEntryVersions(workspace_id=ws, delta=delta, cap=cap):
            return {
                "Update": {
                    "Key": keys.as_key(keys.entry_counter(ws)),
                    "UpdateExpression": "SET #count = if_not_exists(#count, :zero) + :delta, "
                    "entriesRevision = if_not_exists(entriesRevision, :zero) + :one",
                    "ConditionExpression": "attribute_not_exists(#count) AND :delta <= :cap OR #count <= :room",
                    "ExpressionAttributeNames": {"#count": change.attribute},
                    "ExpressionAttributeValues": {
                        ":zero": 0,
                        ":one": 1,
                        ":delta": delta,
                        ":cap": cap,
                        ":room": cap - delta,
                    },
                }
            }
        case ch.ExpireSearchSnapshot(key=key, ttl=ttl):
            return {
                "Update": {
                    "Key": keys.as_key(key),
                    "UpdateExpression": "SET #ttl = :ttl",
                    "ConditionExpression": "attribute_exists(pk)",
                    "ExpressionAttributeNames": {"#ttl": "ttl"},
                    "ExpressionAttributeValues": {":ttl": ttl},
                }
            }
        case ch.BumpEntriesRevision(workspace_id=ws):
            return {
                "Update": {
                    "Key": keys.as_key(keys.entry_counter(ws)),
                    "UpdateExpression": "SET entriesRevision = if_not_exists(entriesRevision, :zero) + :one",
                    "ExpressionAttributeValues": {":zero": 0, ":one": 1},
                }
            }
        case ch.CountEntryRead(workspace_id=ws, entry_id=entry_id, at=at):
            return {
                "Update": {
                    "Key": keys.as_key(keys.entry(ws, entry_id)),
                    "UpdateExpression": "SET readCount = if_not_exists(readCount, :zero) + :one, lastReadAt = :at",
                    "ConditionExpression": "attribute_exists(pk) AND #status = :active",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {":zero": 0, ":one": 1, ":at": at, ":active": "active"},
                }
            }
        case ch.CountAgentWrite():
            return agent_write(change)
    return export_to_dynamo(change)
