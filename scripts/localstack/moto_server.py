"""moto's server (DynamoDB + KMS), with every request serialized behind one lock.

moto alone is not linearizable under concurrent requests (two winners of one conditional transaction
were seen here in 2 of 150 rounds), so race tests against it would flake for moto's reasons. One lock
around the WSGI app makes each request atomic, like the real services' conditional writes.

It answers only to a loopback `Host` (boto3 with `endpoint_url=http://127.0.0.1:<port>` sends exactly
that; SigV4 signs the header, we only read it): any other gets 421 `HOST_NOT_ALLOWED` without reaching moto
or taking the lock, so a web page rebinding its own name to 127.0.0.1 cannot use it.

Run as a process: `python -m scripts.localstack.moto_server --port 5000`; it prints `READY <port>` once
it is listening (port 0 picks a free one), which is what callers wait for.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import io
import ipaddress
import json
import sys
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from typing import Any

from moto.dynamodb import models as dynamodb_models
from moto.dynamodb import responses as dynamodb_responses
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

from workspace_memory.kernel import loopback

StartResponse = Callable[..., Any]


class Serialized:
    """WSGI middleware: one request at a time, body fully produced inside the lock.

    It also honours DynamoDB's `ClientRequestToken` for TransactWriteItems, as the real service does for
    ten minutes: botocore sends one token per call and reuses it on retries, so a retry after a read
    timeout of a transaction moto already applied must replay the success, not run it again (moto ignores
    the token, and the re-run would fail its own conditions).
    """

    TOKEN_SECONDS = 600.0

    def __init__(self, app: Callable[[dict[str, Any], StartResponse], Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()
        self._applied: dict[str, tuple[float, str, str, list[tuple[str, str]], bytes]] = {}

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        token, digest = _transaction_token(environ)
        with self._lock:
            now = time.monotonic()
            self._applied = {k: v for k, v in self._applied.items() if now - v[0] < self.TOKEN_SECONDS}
            seen = self._applied.get(token) if token else None
            if seen is not None:
                if seen[1] != digest:
                    return _mismatch(start_response)
                start_response(seen[2], seen[3])
                return [seen[4]]
            captured: list[Any] = []

            def capture(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
                captured[:] = [status, list(headers)]
                return start_response(status, headers, *rest)

            result = self._app(environ, capture)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
            if token and captured and captured[0].startswith("200"):
                self._applied[token] = (now, digest or "", captured[0], captured[1], body)
            return [body]


class LoopbackHostOnly:
    """WSGI middleware: a request whose `Host` is not loopback never reaches the wrapped app.

    werkzeug joins repeated `Host` fields with a comma (refused) and, for an absolute-form target, puts its
    authority in `HTTP_HOST`, so this one field is what the request is addressed to. werkzeug's server
    closes every connection after its response, so an unread body cannot be taken for the next request.
    """

    def __init__(self, app: Callable[[dict[str, Any], StartResponse], Iterable[bytes]]) -> None:
        self._app = app

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if loopback.is_loopback_host(environ.get("HTTP_HOST")):
            return self._app(environ, start_response)
        body = loopback.refusal_body()
        start_response(
            f"{loopback.STATUS} {loopback.REASON}",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
        )
        return [body]


def _transaction_token(environ: dict[str, Any]) -> tuple[str | None, str | None]:
    if not str(environ.get("HTTP_X_AMZ_TARGET", "")).endswith(".TransactWriteItems"):
        return None, None
    raw = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    environ["wsgi.input"] = io.BytesIO(raw)
    token = json.loads(raw or b"{}").get("ClientRequestToken")
    return (str(token) if token else None), hashlib.sha256(raw).hexdigest()


def _mismatch(start_response: StartResponse) -> list[bytes]:
    body = json.dumps(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
            "message": "ClientRequestToken reused with different parameters",
        }
    ).encode()
    start_response(
        "400 Bad Request", [("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", str(len(body)))]
    )
    return [body]


class _TableCopies:
    """`copy` as moto's DynamoDB backend sees it, except that a whole table is never deep-copied.

    moto backs up every table a TransactWriteItems touches with `copy.deepcopy`, once per action, so a
    transaction costs O(actions x table size) and the suite's shared table turns every transaction into
    megabytes of copying (gigabytes of server memory over a run). `rollback_touched_items` keeps the
    rollback with a copy of only the items the transaction names; everything else moto deep-copies (an
    item before an update) is still copied.
    """

    copy = staticmethod(copy.copy)

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


def _item_key(table: Table, attrs: dict[str, Any]) -> tuple[DynamoType, DynamoType | None] | None:
    if table.hash_key_attr not in attrs:
        return None
    range_attr = table.range_key_attr
    if range_attr is not None and range_attr not in attrs:
        return None
    return DynamoType(attrs[table.hash_key_attr]), None if range_attr is None else DynamoType(attrs[range_attr])


def _restore(table: Table, key: tuple[DynamoType, DynamoType | None], item: Any) -> None:
    hash_value, range_value = key
    if range_value is None:
        if item is None:
            table.items.pop(hash_value, None)
        else:
            table.items[hash_value] = item
    elif item is None:
        table.items.get(hash_value, {}).pop(range_value, None)
    else:
        table.items[hash_value][range_value] = item


def rollback_touched_items() -> None:
    """A cancelled transaction restores exactly the items it named (the only ones it can have changed: the
    server is serialized, so nothing else runs meanwhile), instead of whole-table backups."""
    backend = dynamodb_models.DynamoDBBackend
    if getattr(backend.transact_write_items, "rolls_back_touched_items", False):
        return
    whole_table_backups = backend.transact_write_items
    dynamodb_models.copy = _TableCopies  # type: ignore[assignment,attr-defined]

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        before: list[tuple[Table, tuple[DynamoType, DynamoType | None], Any]] = []
        for action in transact_items:
            op: Any = next(iter(action.values()), {})
            table = self.tables.get(op.get("TableName")) if isinstance(op, dict) else None
            key = None if table is None else _item_key(table, op.get("Item") or op.get("Key") or {})
            if table is not None and key is not None:
                before.append((table, key, copy.deepcopy(table.get_item(*key))))
        try:
            whole_table_backups(self, transact_items)
        except Exception:
            for table, key, item in reversed(before):
                _restore(table, key, item)
            raise

    transact_write_items.rolls_back_touched_items = True  # type: ignore[attr-defined]
    backend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def transact_get_like_dynamodb() -> None:
    """TransactGetItems takes up to 100 items, as DynamoDB has since 2022; moto still refuses more than the old
    25 (a cold search index reads 100 revisions per call: `entry_search.FETCH_BATCH`). TransactWriteItems'
    100 moto has already."""
    dynamodb_responses.TRANSACTION_MAX_ITEMS = 100


def require_loopback(host: str) -> None:
    if host != "localhost" and not ipaddress.ip_address(host).is_loopback:
        raise SystemExit(f"refusing to bind {host}: the local stack listens on loopback only")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args(argv)
    require_loopback(args.host)
    rollback_touched_items()
    transact_get_like_dynamodb()
    app = LoopbackHostOnly(Serialized(DomainDispatcherApplication(create_backend_app)))
    server = make_server(args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler)
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        with suppress(KeyboardInterrupt):  # a terminal's Ctrl-C: stop quietly
            server.serve_forever()
    finally:
        server.server_close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
