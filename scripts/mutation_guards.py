"""The hand-written guard mutants of `make mutation MUTATION_ARGS=--curated` (scripts/mutation.py runs them).

Each removes or weakens one guard the way a careless edit would, by replacing one snippet of one file: a
clause of a DynamoDB condition in `adapters/dynamo_changes.py` (the only place they are spelled; the
integration tests, on moto, exercise them), a change the domain leaves out of a transaction, a comparison, an
identity check. The tests named must then fail. The in-memory table of the unit tests judges the domain's
changes in plain Python, so a unit test holds a domain guard but never a DynamoDB spelling.

To stay meaningful a weakened condition keeps every placeholder it had (DynamoDB refuses unused values, and a
validation error would fail the tests for the wrong reason): a clause is made always true with `OR`, not
deleted along with its values.
"""

from __future__ import annotations

from dataclasses import dataclass

CORE = "layers/core/workspace_memory/"
DYNAMO = CORE + "adapters/dynamo_changes.py"
AUTHORITY = CORE + "turns/authority.py"
GUARDS = "tests/integration/turns/test_fence_guards.py"
WINDOW = GUARDS + "::test_event_between_read_and_fence_is_refused_by_the_fence"
ISOLATION = "tests/integration/test_isolation.py"
ORACLE = ISOLATION + "::test_attack_retired_admission_is_no_oracle"
EXPIRED_ORACLE = ISOLATION + "::test_attack_expired_admission_is_no_oracle"
SERVICES = "tests/unit/turns/test_services.py"
UNIT_FENCE = SERVICES + "::test_an_event_between_the_read_and_the_transaction_is_caught_by_the_fence"
UNIT_RETIRED = SERVICES + "::test_an_event_before_the_read_retires_the_admission_before_anything_is_decrypted"
OWNERS = (
    "tests/integration/turns/test_automation_api.py"
    "::test_a_conversation_answers_to_the_workspace_and_user_of_its_first_admission"
)
UNIT_OWNERS = SERVICES + "::test_a_conversation_answers_only_to_the_user_and_workspace_of_its_first_admission"


@dataclass(frozen=True)
class Curated:
    guard: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


FENCE_CURATED = [
    # -- the fence: capture's transaction, with the event between its read and its write ---------------
    # Only row events: a clock event (`... (clock)` windows) is now answered by the early refusal, which takes
    # `now` after the read, so it holds the fence's condition and the early refusal only together.
    Curated(
        "fence: admission status",
        DYNAMO,
        '"#status = :admitted AND expiresAt > :now AND #mode',
        '"expiresAt > :now AND #mode',
        (WINDOW + "[admission consumed]",),
    ),
    Curated(
        "fence: admission expiry",
        DYNAMO,
        '"#status = :admitted AND expiresAt > :now AND #mode',
        '"#status = :admitted AND (expiresAt > :now OR attribute_exists(pk)) AND #mode',
        (WINDOW + "[admission expired (row)]",),
    ),
    Curated(
        "fence: key-session expiry",
        DYNAMO,
        'keys.key_session(ws, ks), "expiresAt > :now",',
        'keys.key_session(ws, ks), "expiresAt > :now OR attribute_exists(pk)",',
        (WINDOW + "[key session expired (row)]",),
    ),
    Curated(
        "fence: key-session revocation",
        DYNAMO,
        "_check(keys.key_revocation(ws, ks), _ABSENT, {})",
        '_check(keys.key_revocation(ws, ks), f"{_ABSENT} OR attribute_exists(pk)", {})',
        (WINDOW + "[key session revoked]",),
    ),
    Curated(
        "fence: write right",
        AUTHORITY,
        "    changes.append(MemberCanWrite(ws, adm.user_id))\n",
        "    pass  # the write right left out\n",  # `if writer:` keeps a body: a syntax error would kill it for nothing
        (
            WINDOW + "[editor demoted to viewer]",
            WINDOW + "[member removed]",
            UNIT_FENCE + "[writer demoted]",
        ),
    ),
    Curated(
        "fence: policy mode/revision/generation",
        DYNAMO,
        '"#mode = :mode AND policyRevision = :rev AND clearGeneration = :gen",',
        '"#mode = :mode AND policyRevision = :rev AND clearGeneration = :gen OR attribute_exists(pk)",',
        (WINDOW + "[clear]", WINDOW + "[mode read_only]", WINDOW + "[mode auto to auto]"),
    ),
    Curated(
        "fence: consent",
        DYNAMO,
        '"aiEnabled = :true AND consentRevision = :consent", {',
        '"aiEnabled = :true AND consentRevision = :consent OR attribute_exists(pk)", {',
        (WINDOW + "[ai disabled]", WINDOW + "[consent bumped]"),
    ),
    Curated(
        "fence: credential slot",
        DYNAMO,
        '"admissionId = :adm AND nonceHash = :nonce AND expiresAt > :now",',
        '"admissionId = :adm AND nonceHash = :nonce AND expiresAt > :now OR expiresAt > :now",',
        (WINDOW + "[newer admission]",),
    ),
    # -- the early refusal: a retired admission is refused before anything is decrypted ----------------
    Curated(
        "early refusal: admission expiry",
        AUTHORITY,
        "adm.status not in live or adm.expires_at <= now,",
        "adm.status not in live,",
        (EXPIRED_ORACLE + "[admission_expired-auto]", EXPIRED_ORACLE + "[admission_expired-read_only]"),
    ),
    Curated(
        "early refusal: credential slot",
        AUTHORITY,
        "Predicate.CREDENTIAL: not self.slot_holds(now),",
        "Predicate.CREDENTIAL: False,",
        (ORACLE + "[superseded-auto]", ORACLE + "[superseded-read_only]", UNIT_RETIRED + "[credential slot taken]"),
    ),
    Curated(
        "early refusal: consent revision",
        AUTHORITY,
        "            or self.workspace.consent_revision != adm.consent_revision,\n",
        "            or False,\n",
        (ORACLE + "[consent_bumped-auto]", ORACLE + "[consent_bumped-read_only]", UNIT_RETIRED + "[consent bumped]"),
    ),
    Curated(
        "early refusal: key session",
        AUTHORITY,
        "Predicate.KEY_SESSION: not self.key_session_valid(now),",
        "Predicate.KEY_SESSION: False,",
        (
            ORACLE + "[key_session_revoked-auto]",
            EXPIRED_ORACLE + "[key_session_expired-read_only]",
            UNIT_RETIRED + "[key session revoked]",
        ),
    ),
    Curated(
        "early refusal: policy",
        AUTHORITY,
        "or policy.clear_generation != adm.clear_generation,",
        "or False,",
        (UNIT_RETIRED + "[cleared]",),
    ),
    Curated(
        "early refusal: write right",
        AUTHORITY,
        "(adm.mode is Mode.AUTO and not self.can_write())",
        "False",
        (ORACLE + "[demoted-auto]", UNIT_RETIRED + "[writer demoted]"),
    ),
    # -- recall ------------------------------------------------------------------------------------------
    Curated(
        "recall: key-session expiry",
        AUTHORITY,
        " and self.revocation is None and ks.expires_at > now",
        " and self.revocation is None",
        (
            GUARDS + "::test_recall_withholds_memory_once_the_key_session_expired",
            SERVICES + "::test_recall_after_the_key_session_expired_is_no_access",
        ),
    ),
    Curated(
        "recall: consent revision",
        AUTHORITY,
        "            and self.workspace.consent_revision == adm.consent_revision\n",
        "",
        (
            GUARDS + "::test_recall_withholds_memory_after_a_consent_bump_with_ai_still_on",
            SERVICES + "::test_recall_after_ai_is_turned_off_and_on_again_is_no_access",
        ),
    ),
    # -- capture's own checks ---------------------------------------------------------------------------
    Curated(
        "capture: base is the head read",
        CORE + "turns/capture.py",
        "if base_version != head.version:",
        "if False:",
        # Not test_isolation's finding-5 test: its human Save lands inside the capture's transaction, so the
        # fence's MoveHead refuses the capture whether or not this check answered first.
        (SERVICES + "::test_a_base_that_is_not_the_head_read_is_a_conflict_and_writes_nothing",),
    ),
    Curated(
        "capture: result bound at 8192 bytes",
        CORE + "turns/capture.py",
        'if len(updated.encode("utf-8")) > RECALL_MAX_BYTES',
        'if len(updated.encode("utf-8")) >= RECALL_MAX_BYTES',
        (
            GUARDS + "::test_a_capture_landing_at_exactly_8192_bytes_commits",
            SERVICES + "::test_a_result_of_exactly_the_recall_bound_commits_and_one_byte_more_is_refused",
        ),
    ),
    Curated(
        "capture: head bound at 8192 bytes",
        CORE + "turns/capture.py",
        "if head.bytes > RECALL_MAX_BYTES",
        "if head.bytes >= RECALL_MAX_BYTES",
        (GUARDS + "::test_a_head_of_exactly_8192_bytes_still_accepts_a_capture",),
    ),
    Curated(
        "capture: oversized head refused (remove)",
        CORE + "turns/capture.py",
        "if head.bytes > RECALL_MAX_BYTES:",
        "if False:",
        (
            GUARDS + "::test_an_oversized_head_refuses_even_a_remove_that_would_shorten_it",
            SERVICES + "::test_an_oversized_head_refuses_even_a_remove",
        ),
    ),
    # -- applying a proposal -----------------------------------------------------------------------------
    Curated(
        "apply_proposal: generation, no policy row",
        DYNAMO,
        "generation=None):\n            return _check(keys.policy(ws), _ABSENT, {})",
        'generation=None):\n            return _check(keys.policy(ws), f"{_ABSENT} OR attribute_exists(pk)", {})',
        (GUARDS + "::test_a_clear_between_reading_and_applying_a_proposal_refuses_it[no policy row]",),
    ),
    Curated(
        "apply_proposal: generation, policy row",
        DYNAMO,
        '"clearGeneration = :gen", {":gen": generation}',
        '"clearGeneration = :gen OR attribute_exists(pk)", {":gen": generation}',
        (GUARDS + "::test_a_clear_between_reading_and_applying_a_proposal_refuses_it[policy row]",),
    ),
    # -- Save ----------------------------------------------------------------------------------------------
    Curated(
        "Save: head = base (base ahead)",
        DYNAMO,
        '"headVersion = :base AND tombstone = :false"',
        '"headVersion <= :base AND tombstone = :false"',
        (GUARDS + "::test_save_with_a_base_ahead_of_the_head_writes_nothing",),
    ),
    Curated(
        "Save: not on a tombstone",
        DYNAMO,
        '"headVersion = :base AND tombstone = :false"',
        '"headVersion = :base AND (tombstone = :false OR attribute_exists(pk))"',
        (GUARDS + "::test_save_on_a_tombstoned_head_writes_nothing",),
    ),
    Curated(
        "Save: write right",
        CORE + "document/service.py",
        "cached, [MemberCanWrite(workspace_id, user_id)])",
        "cached, [])",
        (
            "tests/integration/workspaces/test_permissions.py::test_viewer_reads_but_cannot_write",
            "tests/integration/workspaces/test_permissions.py::test_demoted_member_loses_write_right",
            SERVICES + "::test_a_refused_save_says_why_without_telling_a_stranger_anything",
            SERVICES + "::test_a_writer_demoted_between_read_and_write_gets_403_and_nothing_is_written",
        ),
    ),
    # -- admission -----------------------------------------------------------------------------------------
    Curated(
        "admission: conversation owner's user",
        CORE + "turns/admission.py",
        "    if owner.user_id != user_id:\n",
        "    if False:\n",
        (
            ISOLATION + "::test_attack_members_runtime_admits_on_anothers_conversation",
            ISOLATION + "::test_attack_stranger_claims_a_conversation_after_its_slot_expired",
            OWNERS,
            UNIT_OWNERS,
        ),
    ),
    Curated(
        "admission: conversation owner's workspace",
        CORE + "turns/admission.py",
        "    if owner.workspace_id != workspace_id:\n",
        "    if False:\n",
        (ISOLATION + "::test_attack_bad_input_admission_in_another_workspace", OWNERS, UNIT_OWNERS),
    ),
    Curated(
        "admission: key session of the same user",
        CORE + "turns/admission.py",
        "if session.opened_by != user_id:",
        "if False:",
        (
            GUARDS + "::test_an_admission_under_another_users_key_session_is_refused",
            SERVICES + "::test_a_key_session_must_be_the_users_own_and_live",
        ),
    ),
]
