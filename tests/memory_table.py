"""The table port in memory: the domain's changes judged in plain Python, for fast unit tests of the
services (no sockets, no expression parsing). Semantics follow DynamoDB's: a transaction judges every
condition against the state before it, then applies all or nothing; reads are consistent snapshots.
And the key store port in memory: which workspaces have a branch key.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence

from tests.memory_archives import archive_apply, archive_holds
from workspace_memory.kernel.errors import Unavailable
from workspace_memory.store import changes as ch
from workspace_memory.store import keys
from workspace_memory.store.judged import judged_key
from workspace_memory.store.ports import Item, TransactionCancelled

Items = dict[keys.Key, Item]


class MemoryKeyStore:
    """Implements `ports.KeyStore`: remembers each workspace's branch key id (no key material)."""

    def __init__(self) -> None:
        self.branch_keys: dict[str, str] = {}
        self._lock = threading.Lock()

    def create_branch_key(self, workspace_id: str) -> str:
        with self._lock:
            if workspace_id in self.branch_keys:  # the real key store's conditional write refuses it too
                raise Unavailable("branch key not created (it exists)")
            self.branch_keys[workspace_id] = f"branch-key/{workspace_id}"
            return self.branch_keys[workspace_id]

    def destroy_branch_key(self, workspace_id: str) -> int:
        with self._lock:
            return 1 if self.branch_keys.pop(workspace_id, None) is not None else 0


class MemoryTable:
    """Implements `ports.Table`. `before_transact`, when set, runs first inside each `transact`: a test's way
    to land a competing event between a service's read and its write."""

    def __init__(self) -> None:
        self.items: Items = {}
        self.transactions = 0
        self.reads = 0
        """Round trips a real table would make: each get, snapshot and query counts one."""
        self.before_transact: Callable[[MemoryTable], None] | None = None
        self._lock = threading.RLock()

    def get(self, pk: str, sk: str) -> Item | None:
        self.reads += 1
        with self._lock:
            return copy.deepcopy(self.items.get((pk, sk)))

    def get_many(self, keys: Sequence[tuple[str, str]]) -> list[Item | None]:
        if len(keys) > 100:  # as TransactGetItems refuses (the adapter asks nothing for no keys)
            raise ValueError(f"TransactGetItems takes at most 100 keys, not {len(keys)}")
        if not keys:
            return []
        self.reads += 1
        with self._lock:
            return [copy.deepcopy(self.items.get(key)) for key in keys]

    def query(
        self,
        pk: str,
        sk_prefix: str,
        *,
        limit: int,
        newest_first: bool,
        start_after: str | None = None,
        attributes: Sequence[str] | None = None,
    ) -> list[Item]:
        self.reads += 1
        with self._lock:
            found = sorted((sk for p, sk in self.items if p == pk and sk.startswith(sk_prefix)), reverse=newest_first)
            if start_after is not None:
                found = [sk for sk in found if (sk < start_after if newest_first else sk > start_after)]
            items = [copy.deepcopy(self.items[(pk, sk)]) for sk in found[:limit]]
        if attributes is None:
            return items
        kept = {"pk", "sk", *attributes}
        return [{name: value for name, value in item.items() if name in kept} for item in items]

    def put(self, item: Item) -> None:
        with self._lock:
            self.items[(item["pk"], item["sk"])] = copy.deepcopy(item)

    def member_keys(
        self, user_id: str, sk_prefix: str, *, limit: int, start_after: keys.Key | None = None
    ) -> list[keys.Key]:
        """As the ByMember index orders them: by sort key, then by table key."""
        self.reads += 1
        with self._lock:
            found = sorted(
                (sk, pk)
                for (pk, sk), item in self.items.items()
                if item.get("userId") == user_id and sk.startswith(sk_prefix)
            )
            after = None if start_after is None else (start_after[1], start_after[0])
            return [(pk, sk) for sk, pk in found if after is None or (sk, pk) > after][:limit]

    def workspace_keys(self, workspace_id: str, limit: int, start_after: keys.Key | None = None) -> list[keys.Key]:
        self.reads += 1
        with self._lock:
            found = sorted(key for key, item in self.items.items() if item.get("workspaceId") == workspace_id)
            return [key for key in found if start_after is None or key > start_after][:limit]

    def transact(self, changes: Sequence[ch.Change]) -> None:
        hook = self.before_transact
        if hook is not None:
            hook(self)
        with self._lock:
            self.transactions += 1
            failed = [change for change in changes if not _holds(change, self.items)]
            if failed:
                judged = [(key, self.items.get(key)) for key in map(judged_key, failed) if key is not None]
                seen = {key: copy.deepcopy(item) for key, item in judged}  # as DynamoDB's ALL_OLD reports them
                raise TransactionCancelled([change.label for change in failed], seen)
            for change in changes:
                _apply(change, self.items)


def _get(items: Items, key: keys.Key) -> Item | None:
    return items.get(key)


def _attr(items: Items, key: keys.Key, name: str) -> object:
    """An attribute of an item, None when the item or the attribute is missing (as DynamoDB compares)."""
    item = items.get(key)
    return None if item is None else item.get(name)


def _history_days(meta: Item) -> int:
    return int(meta.get("historyDays", ch.DEFAULT_HISTORY_DAYS))


def _agent_days(meta: Item) -> int:
    return int(meta.get("agentDays", ch.DEFAULT_AGENT_DAYS))


def _holds(change: ch.Change, items: Items) -> bool:
    match change:
        case ch.Create() | ch.ReplaceRevision(expected=0):
            return _get(items, change.key) is None
        case ch.UnfileEntry():
            return True
        case ch.DeletePage(expected=expected):
            return _attr(items, change.key, "revision") == expected
        case ch.Put():
            return True
        case ch.CompleteErasure(key=key):
            return _attr(items, key, "status") == "running"
        case ch.CountErased(workspace_id=ws, erasure_id=erasure):
            return _attr(items, keys.erasure(ws, erasure), "status") == "running"
        case ch.RemoveMember(workspace_id=ws, user_id=user):
            member = _get(items, keys.member(ws, user))
            return member is not None and member.get("role") != "owner"
        case ch.RewriteAttributes(key=key, before=before):
            found = _get(items, key)
            return found is not None and all(name in found and found[name] == value for name, value in before.items())
        case ch.MoveHead(base=0):
            return _get(items, change.key) is None
        case ch.MoveHead(base=base):
            head = _get(items, change.key)
            return head is not None and head.get("headVersion") == base and head.get("tombstone") is False
        case ch.MemberCanWrite(workspace_id=ws, user_id=user):
            return _attr(items, keys.member(ws, user), "canWrite") is True
        case ch.BumpClearGeneration(workspace_id=ws, seen=seen):
            policy = _get(items, keys.policy(ws))
            return policy is None or policy.get("clearGeneration") == seen
        case ch.ClearGenerationIs(workspace_id=ws, generation=generation):
            policy = _get(items, keys.policy(ws))
            return (
                policy is None
                if generation is None
                else policy is not None and policy.get("clearGeneration") == generation
            )
        case ch.SetPolicyMode(workspace_id=ws, expected=expected):
            policy = _get(items, keys.policy(ws))
            return (policy is None and expected == 0) or (
                policy is not None and policy.get("policyRevision") == expected
            )
        case ch.PolicyIs(workspace_id=ws, revision=0):
            return _get(items, keys.policy(ws)) is None
        case ch.PolicyIs(workspace_id=ws):
            policy = _get(items, keys.policy(ws)) or {}
            return (policy.get("mode"), policy.get("policyRevision"), policy.get("clearGeneration")) == (
                change.mode,
                change.revision,
                change.clear_generation,
            )
        case ch.ConsentIs(workspace_id=ws, consent_revision=consent, history_days=days, agent_days=agent_days):
            meta = _get(items, keys.meta(ws)) or {}
            retention = days is None or (
                _history_days(meta) == days and (agent_days is None or _agent_days(meta) == agent_days)
            )
            return meta.get("aiEnabled") is True and meta.get("consentRevision") == consent and retention
        case ch.RetentionIs(workspace_id=ws, history_days=days, agent_days=agent_days):
            meta = _get(items, keys.meta(ws)) or {}
            return _history_days(meta) == days and (agent_days is None or _agent_days(meta) == agent_days)
        case ch.SetRetention(workspace_id=ws):
            return _get(items, keys.meta(ws)) is not None
        case ch.MemberIsOwner(workspace_id=ws, user_id=user):
            return _attr(items, keys.member(ws, user), "role") == "owner"
        case ch.HeadAt(workspace_id=ws, version=version):
            head = _get(items, keys.head(ws))
            return head is not None and head.get("headVersion") == version and head.get("tombstone") is False
        case ch.ExpireVersion(workspace_id=ws, version=version, now=now):
            found = _get(items, keys.version(ws, version))
            return found is not None and ("ttl" not in found or int(found["ttl"]) > now)
        case ch.PurgeVersion(workspace_id=ws, version=version):
            return _get(items, keys.version(ws, version)) is not None
        case ch.SetAi(workspace_id=ws, seen=seen):
            meta = _get(items, keys.meta(ws)) or {}
            return meta.get("consentRevision") == seen
        case ch.CredentialHeldBy(conversation_id=conv):
            slot = _get(items, keys.credential(conv)) or {}
            return (
                slot.get("admissionId") == change.admission_id
                and slot.get("nonceHash") == change.nonce_hash
                and int(slot.get("expiresAt", 0)) > change.now
            )
        case ch.ConsumeAdmission(admission_id=adm):
            item = _get(items, keys.admission(adm)) or {}
            return (
                item.get("status") == "admitted"
                and int(item.get("expiresAt", 0)) > change.now
                and item.get("mode") == change.mode
                and item.get("workspaceId") == change.workspace_id
                and item.get("userId") == change.user_id
            )
        case ch.AdmissionLive(admission_id=adm):
            item = _get(items, keys.admission(adm)) or {}
            return (
                item.get("status") in ("admitted", "committed")
                and int(item.get("expiresAt", 0)) > change.now
                and item.get("mode") == change.mode
                and item.get("workspaceId") == change.workspace_id
                and item.get("userId") == change.user_id
            )
        case ch.ClaimConversation(item=owner):
            found = _get(items, change.key)
            return found is None or (found["workspaceId"], found["userId"]) == (owner["workspaceId"], owner["userId"])
        case ch.KeySessionLive(workspace_id=ws, key_session_id=ks, now=now):
            session = _get(items, keys.key_session(ws, ks))
            return session is not None and int(session["expiresAt"]) > now
        case ch.KeySessionNotRevoked(workspace_id=ws, key_session_id=ks):
            return _get(items, keys.key_revocation(ws, ks)) is None
        case ch.ReplaceRevision(expected=expected):
            found = _get(items, change.key)
            return found is not None and found.get("revision") == expected
        case ch.TombstoneWorkspace(workspace_id=ws):
            current = _get(items, keys.meta(ws))
            return current is not None and "deletedAt" not in current
        case ch.WorkspaceLive(workspace_id=ws):
            current = _get(items, keys.meta(ws)) or {"deletedAt": None}
            return "deletedAt" not in current and "importingId" not in current
        case ch.TombstoneHead() | ch.Delete() | ch.BumpEntriesRevision():
            return True
        case ch.ExpireSearchSnapshot(key=key):
            return _get(items, key) is not None
        case ch.MemberExists(workspace_id=ws, user_id=user):
            return _get(items, keys.member(ws, user)) is not None
        case ch.EntriesRevisionIs(workspace_id=ws, revision=revision):
            return _attr(items, keys.entry_counter(ws), "entriesRevision") == revision
        case ch.MoveEntryHead(base=base, pinned=pinned):
            found = _get(items, change.key)
            live = found is not None and found.get("revision") == base and found.get("status") == "active"
            return live and (pinned is None or (found or {}).get("pinned") is (True if pinned else None))
        case ch.MarkEntryHead(base=base):
            found = _get(items, change.key) or {}
            return found.get("revision") == base and found.get("status") == "active"
        case ch.EntryNotPinned(workspace_id=ws, entry_id=entry_id):
            return _attr(items, keys.entry(ws, entry_id), "pinned") is None
        case ch.SourceNotForgotten(now=now):
            block = _get(items, change.key)  # absent, or past its window (TTL deletes it later)
            return block is None or ("ttl" in block and int(block["ttl"]) <= now)
        case ch.SupersedeEntryRevision(workspace_id=ws, entry_id=entry_id, revision=revision):
            return _get(items, keys.entry_revision(ws, entry_id, revision)) is not None
        case ch.ExpireEntryRevision(workspace_id=ws, entry_id=entry_id, revision=revision, now=now):
            found = _get(items, keys.entry_revision(ws, entry_id, revision)) or {}
            return found.get("status") == "superseded" and "ttl" in found and int(found["ttl"]) > now
        case ch.ExpireAgentEntry(revision=revision, now=now):
            found = _get(items, change.key) or {}
            agents = found.get("status") == "active" and found.get("authorKind") == "agent"
            return found.get("revision") == revision and agents and "ttl" in found and int(found["ttl"]) > now
        case ch.TakeKeySlot(holder=holder):
            return _attr(items, change.key, "entryId") == holder
        case ch.CountEntryVersions(workspace_id=ws, delta=delta, cap=cap):
            counter = _get(items, keys.entry_counter(ws)) or {}
            return int(counter.get(change.attribute, 0)) + delta <= cap
        case ch.CountEntryRead(workspace_id=ws, entry_id=entry_id):
            return _attr(items, keys.entry(ws, entry_id), "status") == "active"
        case ch.CountAgentWrite(limit=limit, trimmed=trimmed, opens=opens):
            window = _get(items, change.key)
            if opens or window is None:
                return opens and window is None
            writes = window["window"]
            return len(writes) < limit + len(trimmed) and all(t in writes for t in trimmed)
    held = archive_holds(change, items)
    if held is None:
        raise TypeError(f"no in-memory form for {type(change).__name__}")
    return held


def _apply(change: ch.Change, items: Items) -> None:
    if archive_apply(change, items):
        return
    match change:
        case ch.Create() | ch.Put() | ch.MoveHead() | ch.ClaimConversation() | ch.ReplaceRevision():
            items[change.key] = copy.deepcopy(change.item)
        case ch.CompleteErasure():
            items[change.key] = copy.deepcopy(change.item)
        case ch.RemoveMember(workspace_id=ws, user_id=user):
            del items[keys.member(ws, user)]
        case ch.CountErased(workspace_id=ws, erasure_id=erasure, counts=counts):
            record = items[keys.erasure(ws, erasure)]
            for name, value in counts.items():
                record[name] = int(record.get(name, 0)) + value
        case ch.RewriteAttributes(key=key, after=after):
            item = items[key]
            for name, value in after.items():
                if value is None:
                    item.pop(name, None)
                else:
                    item[name] = copy.deepcopy(value)
        case ch.BumpClearGeneration(workspace_id=ws, seen=seen):
            key = keys.policy(ws)
            policy = items.setdefault(key, {**keys.as_key(key)})
            policy["clearGeneration"] = seen + 1
            policy.setdefault("mode", "read_only")
            policy.setdefault("policyRevision", 0)
        case ch.SetPolicyMode(workspace_id=ws):
            key = keys.policy(ws)
            policy = items.setdefault(key, {**keys.as_key(key)})
            policy.update(
                mode=change.mode, policyRevision=change.expected + 1, updatedAt=change.at, updatedBy=change.by
            )
            policy.setdefault("clearGeneration", 0)
        case ch.SetAi(workspace_id=ws, enabled=enabled, seen=seen):
            items[keys.meta(ws)].update(aiEnabled=enabled, consentRevision=seen + 1)
        case ch.SetRetention(workspace_id=ws, history_days=days, agent_days=agent_days):
            given = {"historyDays": days, "agentDays": agent_days}
            items[keys.meta(ws)].update({name: value for name, value in given.items() if value is not None})
        case ch.ExpireVersion(workspace_id=ws, version=version):
            items[keys.version(ws, version)].update(ttl=change.ttl, supersededAt=change.superseded_at)
        case ch.PurgeVersion(workspace_id=ws, version=version, at=at, by=by):
            stub = items[keys.version(ws, version)]
            stub.pop("ciphertext", None)
            stub.update(purgedAt=at, purgedBy=by)
        case ch.Delete(key=key) | ch.UnfileEntry(key=key) | ch.DeletePage(key=key):
            items.pop(key, None)
        case ch.MoveEntryHead():
            items[change.key] = copy.deepcopy(change.item)
        case ch.MarkEntryHead(pinned=pinned, verified=verified, evidence=evidence):
            head = items[change.key]
            if pinned is not None:
                head.pop("pinned", None)
                head.update({"pinned": True} if pinned else {})
            if verified is not None:
                head.update(verifiedAt=verified[0], verifiedBy=verified[1])
                head.pop("verifiedEvidence", None)
                head.update({} if evidence is None else {"verifiedEvidence": evidence})
        case ch.SupersedeEntryRevision(workspace_id=ws, entry_id=entry_id, revision=revision):
            found = items[keys.entry_revision(ws, entry_id, revision)]
            found.update(status="superseded", supersededBy=change.by, supersededAt=change.at, ttl=change.ttl)
        case ch.ExpireEntryRevision(workspace_id=ws, entry_id=entry_id, revision=revision):
            items[keys.entry_revision(ws, entry_id, revision)]["ttl"] = change.ttl
        case ch.ExpireAgentEntry():
            items[change.key]["ttl"] = change.ttl
        case ch.TakeKeySlot():
            items[change.key] = copy.deepcopy(change.item)
        case ch.CountEntryVersions(workspace_id=ws, delta=delta):
            key = keys.entry_counter(ws)
            counter = items.setdefault(key, {**keys.as_key(key)})
            counter[change.attribute] = int(counter.get(change.attribute, 0)) + delta
            counter["entriesRevision"] = int(counter.get("entriesRevision", 0)) + 1
        case ch.ExpireSearchSnapshot(key=key, ttl=ttl):
            items[key]["ttl"] = ttl
        case ch.BumpEntriesRevision(workspace_id=ws):
            key = keys.entry_counter(ws)
            counter = items.setdefault(key, {**keys.as_key(key)})
            counter["entriesRevision"] = int(counter.get("entriesRevision", 0)) + 1
        case ch.CountEntryRead(workspace_id=ws, entry_id=entry_id, at=at):
            head = items[keys.entry(ws, entry_id)]
            head["readCount"] = int(head.get("readCount", 0)) + 1
            head["lastReadAt"] = at
        case ch.CountAgentWrite(write_id=write_id, at_ms=at_ms, ttl=ttl, trimmed=trimmed):
            window = items.setdefault(change.key, {**keys.as_key(change.key), "window": {}, "writes": 0})
            for gone in trimmed:
                del window["window"][gone]
            window["window"][write_id] = at_ms
            window["writes"] = int(window["writes"]) + 1
            window["ttl"] = ttl
        case ch.ConsumeAdmission(admission_id=adm):
            items[keys.admission(adm)].update(
                status="committed", captureRequestHash=change.request_hash, captureReceipt=copy.deepcopy(change.receipt)
            )
        case ch.TombstoneWorkspace(workspace_id=ws):
            workspace = items[keys.meta(ws)]
            workspace.update(deletedAt=change.at, deletedBy=change.by, aiEnabled=False)
            workspace["consentRevision"] = int(workspace.get("consentRevision", 0)) + 1
        case ch.TombstoneHead(workspace_id=ws):
            key = keys.head(ws)
            head = items.setdefault(key, {**keys.as_key(key), "headVersion": 0})
            head["tombstone"] = True
        case _:
            pass  # condition checks write nothing
