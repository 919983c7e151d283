"""The page routes (docs/architecture.md#pages), served by the entries function (`app.include_router`): list,
create, read, edit and delete pages, file and unfile entries, and the owner's extra categories. Thin: parse,
call `PageService`, answer its model."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from workspace_memory.api.http import human_user, no_content, respond
from workspace_memory.api.models.pages import PageCategoriesOut, PageOut, PagesOut, PageWritten
from workspace_memory.api.schemas.pages import CreatePage, FileEntry, SetPageCategories, UpdatePage
from workspace_memory.bootstrap import page_service

router = APIGatewayHttpRouter()  # type: ignore[no-untyped-call]

Revision = Annotated[int, Query(ge=1)]


@router.get(
    "/v1/workspaces/<ws>/pages",
    summary="List pages",
    description=(
        "The pages the caller may read (workspace pages and their own private ones), of `category` when given, a "
        "page at a time: title, category, entry count and whether the summary is stale; and every category a page "
        "may have now. Changes nothing."
    ),
)
def list_pages(
    ws: str,
    category: Annotated[str | None, Query(max_length=32)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[PagesOut]:
    return respond(200, PagesOut.of(page_service().list_pages(human_user(router), ws, category, limit, cursor)))


@router.post(
    "/v1/workspaces/<ws>/pages",
    summary="Create a page",
    description=(
        "A page groups entries about one subject. `workspace` pages need write right; a `private` page is its "
        "member's own, whatever their role. The category is a built-in one or one the owner added (400 "
        "`INVALID_PAGE_CATEGORY`)."
    ),
)
def create_page(ws: str, body: Annotated[CreatePage, Body()]) -> Response[PageWritten]:
    page = page_service().create(human_user(router), ws, body.scope, body.category, body.title, body.notes)
    return respond(201, PageWritten.of(page))


@router.get(
    "/v1/workspaces/<ws>/pages/<page_id>",
    summary="Read a page",
    description=(
        "The page with its notes, its summary, the live entries filed in it (id, revision, title, summary) and "
        "`summaryStale`. Another member's private page is 404 `PAGE_NOT_FOUND`, as a missing one. Changes nothing."
    ),
)
def read_page(ws: str, page_id: str) -> Response[PageOut]:
    return respond(200, PageOut.of(page_service().read(human_user(router), ws, page_id)))


@router.patch(
    "/v1/workspaces/<ws>/pages/<page_id>",
    summary="Edit a page",
    description=(
        "Sets title, category or notes on `revision` (else 409 `STALE_REVISION` with the current one). Notes are "
        "people's: only this route writes them."
    ),
)
def update_page(ws: str, page_id: str, body: Annotated[UpdatePage, Body()]) -> Response[PageWritten]:
    from workspace_memory.pages.model import PageChanges

    changes = PageChanges(body.title, body.category, body.notes)
    page = page_service().update(human_user(router), ws, page_id, body.revision, changes)
    return respond(200, PageWritten.of(page))


@router.delete(
    "/v1/workspaces/<ws>/pages/<page_id>",
    summary="Delete a page",
    description="Deletes the page at `revision` and its filings; the entries stay, unfiled. 204 with no body.",
)
def delete_page(ws: str, page_id: str, revision: Revision) -> Response[str]:
    page_service().delete(human_user(router), ws, page_id, revision)
    return no_content()


@router.put(
    "/v1/workspaces/<ws>/pages/<page_id>/entries/<entry_id>",
    summary="File an entry in a page",
    description=(
        "On the page's `revision`. An entry is in at most one page (409 `ENTRY_ALREADY_FILED`); a private entry "
        "only in a private page of its own member (400 `FILING_SCOPE_MISMATCH`); an entry the caller cannot see is "
        "404 `ENTRY_NOT_FOUND`. Filing it where it is already changes nothing."
    ),
)
def file_entry(ws: str, page_id: str, entry_id: str, body: Annotated[FileEntry, Body()]) -> Response[PageWritten]:
    pages = page_service()
    page = pages.filing.file(pages.caller(human_user(router), ws), page_id, entry_id, body.revision)
    return respond(200, PageWritten.of(page))


@router.delete(
    "/v1/workspaces/<ws>/pages/<page_id>/entries/<entry_id>",
    summary="Unfile an entry from a page",
    description="On the page's `revision`; 404 `ENTRY_NOT_FILED` when the page does not hold the entry.",
)
def unfile_entry(ws: str, page_id: str, entry_id: str, revision: Revision) -> Response[PageWritten]:
    pages = page_service()
    page = pages.filing.unfile(pages.caller(human_user(router), ws), page_id, entry_id, revision)
    return respond(200, PageWritten.of(page))


@router.put(
    "/v1/workspaces/<ws>/page-categories",
    summary="Set the workspace's extra page categories",
    description=(
        "Owner only: up to 20 slugs beside the built-in `you`, `topic`, `area`, `people`, on `revision` (0 the "
        "first time). A category taken off stays on the pages that have it; new writes may no longer choose it."
    ),
)
def set_page_categories(ws: str, body: Annotated[SetPageCategories, Body()]) -> Response[PageCategoriesOut]:
    found = page_service().set_categories(human_user(router), ws, body.categories, body.revision)
    return respond(200, PageCategoriesOut.of(found))
