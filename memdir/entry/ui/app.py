"""`memdir ui`'s pages: a thin web shell over memdir.browse, memdir.overview and the recall stage's preview.

Every page is rendered on the server by Jinja with autoescaping on, so a memory's text is shown as text;
the only script is static/ui.js (search as you type, verification statuses). Writes go through the store,
exactly as the CLI's do: previous bytes kept, the secret guard, the same one-line refusals.
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memdir import browse, overview
from memdir.entry.ui.security import Guard, GuardMiddleware
from memdir.errors import MemdirError, os_error_line

HERE = Path(__file__).parent
DONE = {"saved": "Saved. The previous version is kept below.", "deleted": "Deleted. Its bytes are kept: restore below.",
        "restored": "Restored. The version it replaced is kept below."}


class Shell:
    """What the pages share: the folders shown, the guard, the templates, the background verification."""

    def __init__(self, memory_dir: Path, guard: Guard, project_root: Path | None = None,
                 user_home: Path | None = None, verify: bool = True) -> None:
        self.memory_dir, self.guard, self.project_root = Path(memory_dir), guard, project_root
        self.sources = {s.key: s for s in browse.sources(self.memory_dir, project_root, user_home)}
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                                      undefined=jinja2.StrictUndefined)
        stores = {key: s.store for key, s in self.sources.items()}
        self.verification = overview.Verification(stores, str(project_root) if project_root and verify else None)
        # Before the URL is printed, not on the first page: compiling the templates (~130 ms) and importing
        # the YAML reader a scan needs for some real headers (~110 ms).
        for name in self.env.list_templates():
            self.env.get_template(name)
        import memdir.bounded_yaml  # noqa: F401

    def page(self, name: str, status: int = 200, **values) -> HTMLResponse:
        values.update(csrf=self.guard.csrf, folder=str(self.memory_dir), sources=list(self.sources.values()))
        return HTMLResponse(self.env.get_template(name).render(**values), status_code=status)

    def source(self, key: str | None) -> browse.Source:
        found = self.sources.get(key or "personal")
        if found is None:
            raise MemdirError(f"no memory folder {key!r} here; pick one from the list")
        return found


def memory_url(source: str, rel_path: str, **more: str) -> str:
    """Relative, as every link of the pages is: they all sit directly under the run's path (Guard.base)."""
    return "memory?" + urlencode({"source": source, "file": rel_path, **more})


def recalled_url(rel_path: str) -> str:
    """A memory recall found in the personal folder's scan, which includes team memory under team/."""
    team = "team/"
    if rel_path.startswith(team):
        return memory_url("team", rel_path[len(team):])
    return memory_url("personal", rel_path)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# --- pages ----------------------------------------------------------------------------------------
def list_page(shell: Shell, request: Request) -> Response:
    q = request.query_params
    query, kind, wanted = q.get("q", ""), q.get("type", ""), q.get("source", "")
    rows = [r for s in shell.sources.values() if not wanted or wanted in (s.key, s.kind)
            for r in browse.rows(s)]
    shown = [r for r in rows if browse.matches(r, query) and (not kind or r.type == kind)]
    gone = [(s.key, s.label, rel) for s in shell.sources.values() if not wanted or wanted in (s.key, s.kind)
            for rel in browse.deleted(s.store)]
    return shell.page("list.html", rows=shown, total=len(rows), q=query, type=kind, source=wanted,
                      labels={k: s.label for k, s in shell.sources.items()}, memory_url=memory_url, gone=gone)


def memory_page(shell: Shell, request: Request) -> Response:
    source = shell.source(request.query_params.get("source"))
    rel = request.query_params.get("file", "")
    done = DONE.get(request.query_params.get("done", ""), "")
    if not source.store.exists(rel):
        history = browse.changes(source.store, rel, None) if rel in browse.deleted(source.store) else []
        if not history:
            raise MemdirError(f"no memory at {rel!r} in {source.store.root}")
        return shell.page("deleted.html", source=source, rel=rel, history=history, done=done)
    found = browse.detail(source, rel)
    return shell.page("memory.html", m=found, source=source, done=done, segments=_segments(found.body),
                      memory_url=memory_url)


def _segments(body: str) -> list[tuple[str, str]]:
    """The body as (text, link target) pieces: `[[links]]` become links, everything else stays text."""
    out, last = [], 0
    for match in browse.LINK.finditer(body):
        out.append((body[last:match.start()], ""))
        out.append((match.group(0), match.group(1).strip()))
        last = match.end()
    out.append((body[last:], ""))
    return out


def link_page(shell: Shell, request: Request) -> Response:
    """A `[[link]]` followed from a body: the memory it names, or a page saying no memory has that name."""
    source = shell.source(request.query_params.get("source"))
    target = request.query_params.get("name", "")
    names = browse._names(source.store.scan().headers)
    rel = names.get(target.casefold()) or names.get(browse.kebab_slug(target))
    if rel is None:
        raise MemdirError(f"no memory named {target!r} in {source.label} memory")
    return RedirectResponse(memory_url(source.key, rel), status_code=303)


def edit_page(shell: Shell, request: Request) -> Response:
    source = shell.source(request.query_params.get("source"))
    found = browse.detail(source, request.query_params.get("file", ""))
    return shell.page("edit.html", m=found, source=source, expected=digest(found.text), error="",
                      types=("user", "feedback", "project", "reference"))


async def edit_save(shell: Shell, request: Request) -> Response:
    form = await _form(shell, request)
    source = shell.source(form.get("source"))
    rel = form.get("file", "")
    current = source.store.read_file(browse.header_of(source.store, rel).rel_path)
    try:
        if digest(current) != form.get("expected"):
            raise MemdirError(f"{rel} changed since you opened it; reload it and edit again (nothing was saved)")
        browse.edit(source.store, rel, description=form.get("description", ""), type_=form.get("type", ""),
                    body=form.get("body", ""), expected_text=current)
    except MemdirError as exc:
        found = browse.detail(source, rel)
        found.description, found.type, found.body = form.get("description", ""), form.get("type", ""), form.get("body", "")
        return shell.page("edit.html", status=400, m=found, source=source, expected=form.get("expected", ""),
                          error=str(exc), types=("user", "feedback", "project", "reference"))
    return RedirectResponse(memory_url(source.key, rel, done="saved"), status_code=303)


async def delete(shell: Shell, request: Request) -> Response:
    form = await _form(shell, request)
    source = shell.source(form.get("source"))
    rel = browse.header_of(source.store, form.get("file", "")).rel_path
    source.store.delete(rel)
    return RedirectResponse(memory_url(source.key, rel, done="deleted"), status_code=303)


async def restore(shell: Shell, request: Request) -> Response:
    form = await _form(shell, request)
    source = shell.source(form.get("source"))
    rel = form.get("file", "")
    source.store.resolve_rel(rel)  # a memory's own path only: never MEMORY.md or anything outside
    rel, _, _ = source.store.restore(rel, form.get("version") or None)
    return RedirectResponse(memory_url(source.key, rel, done="restored"), status_code=303)


async def _form(shell: Shell, request: Request) -> dict[str, str]:
    form = await request.form()
    values = {k: v for k, v in form.items() if isinstance(v, str)}
    if not shell.guard.check_csrf(values.get("csrf")):
        raise PermissionError("the form's CSRF token is missing or from another run; reload the page")
    return values


def recall_page(shell: Shell, request: Request) -> Response:
    from memdir.stages.recall.explain import preview

    query = request.query_params.get("q", "").strip()
    found = None
    if query:
        found = preview(shell.memory_dir, query, project_root=str(shell.project_root) if shell.project_root else None,
                        dense=_dense())
    return shell.page("recall.html", q=query, p=found, recalled_url=recalled_url)


def _dense():
    """The dense model when it is installed and wanted, as the recall server would use it."""
    from memdir.embeddings import installed, shared_model

    return shared_model(threads=1) if installed() else None


def graph_page(shell: Shell, request: Request) -> Response:
    decisions, path = overview.decision_graph(shell.memory_dir, shell.project_root)
    return shell.page("graph.html", links=overview.links_graph(shell.source("personal").store), decisions=decisions,
                      decisions_path=path, memory_url=memory_url)


def spend_page(shell: Shell, request: Request) -> Response:
    found = overview.spend(shell.memory_dir)
    most = max((d["cost_usd"] for d in found["days"]), default=0.0) or 1.0
    return shell.page("spend.html", s=found, most=most)


def health_page(shell: Shell, request: Request) -> Response:
    checked = [(s, overview.health(s.store)) for s in shell.sources.values()]
    return shell.page("health.html", checked=checked, verification=shell.verification.status())


def verify_json(shell: Shell, request: Request) -> Response:
    return JSONResponse(shell.verification.status())


# --- the application ------------------------------------------------------------------------------
def build_app(shell: Shell) -> GuardMiddleware:
    def handle(view):
        async def endpoint(request: Request) -> Response:
            try:
                if inspect.iscoroutinefunction(view):
                    return await view(shell, request)
                return await run_in_threadpool(view, shell, request)  # scans and recall off the event loop
            except PermissionError as exc:
                return shell.page("error.html", status=403, message=str(exc))
            except MemdirError as exc:
                return shell.page("error.html", status=400, message=str(exc))
            except OSError as exc:
                return shell.page("error.html", status=400, message=os_error_line(exc))
        return endpoint

    routes = [
        Route("/", handle(list_page)),
        Route("/memory", handle(memory_page)),
        Route("/link", handle(link_page)),
        Route("/edit", handle(edit_page)),
        Route("/edit", handle(edit_save), methods=["POST"]),
        Route("/delete", handle(delete), methods=["POST"]),
        Route("/restore", handle(restore), methods=["POST"]),
        Route("/recall", handle(recall_page)),
        Route("/graph", handle(graph_page)),
        Route("/spend", handle(spend_page)),
        Route("/health", handle(health_page)),
        Route("/verify.json", handle(verify_json)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    mounted = Mount(shell.guard.base.rstrip("/"), routes=routes)  # the run's path: Guard refuses any other
    return GuardMiddleware(Starlette(routes=[mounted]), shell.guard)
