"""Agent turns: Temporal against a plain in-process loop of the same activities.

K agent turns of TURN_ROUNDS model rounds each (`remember:`, `note:`, a question) run through the real stack:
the Temporal dev server, the local gateway in a thread on the same moto server, and the production worker
in-process with the scripted model. Each turn is admitted through `TurnService` (untimed) and timed from
`start_workflow` to its result. The baseline runs the same rounds as a plain in-process loop that calls the
same activity methods directly, as `AgentTurnWorkflow.run` would, against the same gateway and moto, no
Temporal; the two alternate turn by turn. Reported per model round: activities, AWS calls (the API's, and
the payload codec's KMS calls, which only Temporal pays) and the wall time, with its ratio to the plain loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from scripts.bench.report import render_turn_calls, render_turns
from scripts.bench.scenes import OWNER, ROTATE_EVERY, Rotation, auto_workspace
from scripts.bench.stats import CallRecorder, TurnSample, TurnSummary, summarize_turns
from scripts.localstack.stack import LocalStack
from workflows.activities import TOOL_ACTIVITIES, TurnActivities
from workflows.payloads import RoundInput, RoundOutput, ToolInput, ToolRun
from workflows.tools import CallOutcome, ToolName
from workflows.turn_workflow import run_turn
from workflows.worker import build_worker_parts
from workspace_memory import bootstrap
from workspace_memory.adapters.aws import build_clients
from workspace_memory.adapters.kms_cipher import KmsCipher
from workspace_memory.adapters.temporal_codec import data_converter, payload_cipher
from workspace_memory.adapters.temporal_turns import start_options
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.capture import Outcome
from workspace_memory.turns.service import TurnService
from workspace_memory.turns.turn_contract import WORKFLOW_NAME, TurnInput, TurnView

TURN_TABLE = "wm-bench-turns"
TURN_ROUNDS = 3
TEMPORAL_TURN = "Temporal workflow"
PLAIN_TURN = "plain in-process loop"
EXPECTED_TOOLS = ((ToolName.REMEMBER, Outcome.COMMITTED), (ToolName.NOTES_UPDATE, CallOutcome.SAVED))


def turn_message(label: str) -> str:
    """A user message the scripted model answers in exactly TURN_ROUNDS rounds: capture, note, answer."""
    return f"remember: - fact {label}\nnote: n {label}\nWhat do you know?"


def scheduled_activities(event_types: Iterable[int]) -> int:
    """How many activities a workflow history scheduled (retries reuse their scheduled event)."""
    return sum(1 for kind in event_types if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)


def turn_problems(view: TurnView) -> list[str]:
    """Why a benchmark turn did not run as designed (empty when it did): the numbers would measure
    something else. Names tools, outcomes and statuses only, never text."""
    problems = []
    if view.status != "completed":
        problems.append(f"status {view.status}")
    if view.rounds != TURN_ROUNDS:
        problems.append(f"{view.rounds} rounds, not {TURN_ROUNDS}")
    tools = tuple((o.tool, o.outcome) for o in view.tool_outcomes)
    if tools != EXPECTED_TOOLS:
        problems.append(f"tool outcomes {tools}")
    statuses = [r.status.value for r in view.receipts]
    if statuses != ["ok"] * view.rounds:
        problems.append(f"recall statuses {statuses}")
    return problems


class CapturingRunner:
    """A `TurnRunner` that keeps what ingress would start, to be run some other way (timed, or recorded)."""

    def __init__(self) -> None:
        self.started: list[TurnInput] = []

    def start(self, turn: TurnInput) -> None:
        self.started.append(turn)

    def view(self, turn_id: str) -> TurnView | None:  # noqa: ARG002 - the caller holds the results itself
        return None


async def plain_turn(activities: TurnActivities, turn: TurnInput) -> tuple[TurnView, int]:
    """`AgentTurnWorkflow`'s own loop (`run_turn`) with the same activity methods called directly: no Temporal,
    no payload codec, no retries. Returns the view and the number of activities run."""
    ran = 0

    async def model_round(data: RoundInput) -> RoundOutput:
        nonlocal ran
        ran += 1
        return activities.model_round(data)

    async def tool(name: ToolName, data: ToolInput) -> ToolRun:
        nonlocal ran
        ran += 1
        return TOOL_ACTIVITIES[name](activities, data)

    view = TurnView(conversation_id=turn.conversation_id, status="running")
    return await run_turn(turn, view, model_round, tool), ran


class TurnScenes:
    """Admits each benchmark turn through `TurnService` (as the turns route does) on a fresh conversation and
    session, in an `auto` workspace that is replaced every ROTATE_EVERY turns so its document stays small."""

    def __init__(self, api: Services, content: str) -> None:
        self._api = api
        self._content = content
        self._runner = CapturingRunner()
        self._ingress = TurnService(api.table, api.admission, self._runner)
        self.rotation = Rotation(ROTATE_EVERY)
        self._workspace_id = ""

    def admit(self, label: str) -> TurnInput:
        if self.rotation.due():
            self._workspace_id, _ = auto_workspace(self._api, f"turns-{self.rotation.tables}", self._content)
        request = AdmissionRequest(
            conversation_id=f"conv-bench-{label}",
            workspace_id=self._workspace_id,
            user_id=OWNER,
            idempotency_key=uuid.uuid4().hex,
            session_id=f"sess-bench-{label}",
            message=turn_message(label),
        )
        self._ingress.start(request)
        return self._runner.started[-1]


@dataclass(frozen=True)
class TurnRig:
    """What both ways of running a turn share: the same gateway, activities and call recorders."""

    settings: Settings
    scenes: TurnScenes
    activities: TurnActivities
    api_calls: CallRecorder
    codec_calls: CallRecorder
    starter_cipher: KmsCipher


def _checked(view: TurnView, how: str) -> TurnView:
    problems = turn_problems(view)
    if problems:
        raise RuntimeError(f"a benchmark turn ({how}) did not run as designed: {'; '.join(problems)}")
    return view


async def _temporal_turn(rig: TurnRig, client: Client, turn: TurnInput) -> TurnSample:
    """Timed from `start_workflow` (ingress's `start_options`) to the result; activities counted from the history."""
    api_mark, codec_mark = len(rig.api_calls.calls), len(rig.codec_calls.calls)
    start = time.perf_counter_ns()
    options = start_options(rig.settings.temporal_task_queue)
    handle = await client.start_workflow(WORKFLOW_NAME, turn, id=turn.turn_id, result_type=TurnView, **options)
    view: TurnView = await handle.result()
    elapsed_ms = (time.perf_counter_ns() - start) / 1e6
    api, codec = rig.api_calls.since(api_mark), rig.codec_calls.since(codec_mark)
    history = await handle.fetch_history()
    activities = scheduled_activities(event.event_type for event in history.events)
    return TurnSample(elapsed_ms, _checked(view, TEMPORAL_TURN).rounds, activities, api, codec)


async def _plain_turn(rig: TurnRig, turn: TurnInput) -> TurnSample:
    api_mark, codec_mark = len(rig.api_calls.calls), len(rig.codec_calls.calls)
    start = time.perf_counter_ns()
    view, activities = await plain_turn(rig.activities, turn)
    elapsed_ms = (time.perf_counter_ns() - start) / 1e6
    api, codec = rig.api_calls.since(api_mark), rig.codec_calls.since(codec_mark)
    return TurnSample(elapsed_ms, _checked(view, PLAIN_TURN).rounds, activities, api, codec)


async def _run_turns(rig: TurnRig, turns: int, warmup: int) -> list[tuple[str, list[TurnSample]]]:
    """Alternates the two ways turn by turn (and which goes first), so drift falls on both alike."""
    client = await Client.connect(
        rig.settings.temporal_address,
        namespace=rig.settings.temporal_namespace,
        data_converter=data_converter(rig.starter_cipher),
    )
    samples: dict[str, list[TurnSample]] = {TEMPORAL_TURN: [], PLAIN_TURN: []}
    for number in range(warmup + turns):
        order = (TEMPORAL_TURN, PLAIN_TURN) if number % 2 == 0 else (PLAIN_TURN, TEMPORAL_TURN)
        for how in order:
            short = "temporal" if how == TEMPORAL_TURN else "plain"
            turn = rig.scenes.admit(f"{short}-{number}")  # untimed, its calls not counted
            if how == TEMPORAL_TURN:
                sample = await _temporal_turn(rig, client, turn)
            else:
                sample = await _plain_turn(rig, turn)
            if number >= warmup:
                samples[how].append(sample)
    return [(TEMPORAL_TURN, samples[TEMPORAL_TURN]), (PLAIN_TURN, samples[PLAIN_TURN])]


@dataclass(frozen=True)
class TurnReport:
    text: str
    meta: dict[str, Any]
    summaries: list[TurnSummary]


def turn_benchmark(stack: LocalStack, content: str, turns: int, warmup: int) -> TurnReport:
    """On the stack's own table (TURN_TABLE): its gateway, Temporal dev server and a worker in a thread."""
    gateway_url = stack.gateway()
    settings = stack.worker_settings(automation_auth="dev:bench")
    api = bootstrap.services()  # the very instance the gateway's in-process handlers use (gateway_mode threads)
    api_calls, codec_calls = CallRecorder(), CallRecorder()
    api_calls.attach(api.clients.dynamodb, api.clients.kms, api.clients.key_store)
    # The payload codec's ciphers get clients of their own, so their KMS calls are counted apart: the
    # worker's (workflow and activities) and the starter's (the turns route's, in production).
    worker_kms, starter_kms = build_clients(settings).kms, build_clients(settings).kms
    codec_calls.attach(worker_kms, starter_kms)
    converter = data_converter(payload_cipher(worker_kms, settings.kms_key_id))
    parts = dataclasses.replace(build_worker_parts(settings), converter=converter)
    stack.worker_thread(settings, parts)
    scenes = TurnScenes(api, content)
    starter = KmsCipher(starter_kms, settings.kms_key_id)
    rig = TurnRig(settings, scenes, parts.activities, api_calls, codec_calls, starter)
    summaries = summarize_turns(asyncio.run(_run_turns(rig, turns, warmup)), PLAIN_TURN)
    by_name = {s.name: s for s in summaries}
    overhead = by_name[TEMPORAL_TURN].median_ms_per_round - by_name[PLAIN_TURN].median_ms_per_round
    text = "\n".join(
        [
            f"Agent turns: {turns} timed turns each way after {warmup} warm-up each, alternating; every turn a "
            f"fresh conversation, admission and session, admitted untimed through TurnService",
            f"  message {turn_message('<i>')!r} ({TURN_ROUNDS} model rounds: capture, note, answer); scripted model",
            f"  Temporal dev server {settings.temporal_address}, worker in-process; gateway {gateway_url} on the "
            f"same moto server (table {settings.table_name}, {scenes.rotation.tables} workspace(s), a fresh one "
            f"every {ROTATE_EVERY} turns), its responses written with TCP_NODELAY (the gateway's own setting)",
            "  Temporal: start_workflow to result, activities counted from the history (ActivityTaskScheduled);",
            "  plain loop: AgentTurnWorkflow.run's rounds calling the same activity methods directly, no Temporal.",
            "",
            render_turns(summaries),
            "",
            render_turn_calls(summaries),
            "",
            f"Temporal's overhead: {overhead:.2f} ms per model round (difference of the medians).",
        ]
    )
    meta = {
        "timed_turns": turns,
        "turn_warmup": warmup,
        "turn_rounds": TURN_ROUNDS,
        "turn_message": turn_message("<i>"),
        "temporal_overhead_ms_per_round": overhead,
    }
    return TurnReport(text, meta, summaries)
