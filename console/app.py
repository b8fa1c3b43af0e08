"""The crawl console: a web UI and a JSON API over a crawl database (FastAPI + Jinja2).

Pages: runs (start and stop crawls), a run's live figures, the page browser and a page's
detail (why it was accepted or dropped), labels, the topic editor, the API's OpenAPI page.
The JSON API under ``/api`` serves the same data; ``/metrics`` is Prometheus text.

Safety: with a token (``TOPICRAWL_CONSOLE_TOKEN``; required to bind anything but the loopback)
every request needs it (``Authorization: Bearer``, or the cookie set by ``/login``); on the
loopback the Host header must name the loopback (DNS rebinding); every HTML form carries a
CSRF token equal to a SameSite=Strict cookie (double submit); the API's writes take only
JSON (a cross-site page cannot send it without a CORS preflight, which is never granted) and a
request whose Origin is another site is refused.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode, urlsplit

from fastapi import FastAPI, Form, HTTPException, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.middleware.base import BaseHTTPMiddleware

from console.crawls import CrawlManager, CrawlStartError
from console.data import KINDS, ConsoleData, PageFilter
from console.explain import PageExplainer
from console.labels import SCOPES, LabelError, LabelStore, label_target
from console.metrics import metrics_text
from console.topics import FIELDS, TopicDirectory, TopicEdit, form_values, sha
from models.store import Store
from topicrawl.errors import TopicFileError

HERE = Path(__file__).resolve().parent
CSRF_COOKIE = "topicrawl_csrf"
TOKEN_COOKIE = "topicrawl_token"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "testserver"}


@dataclass
class ConsoleConfig:
    """What one console serves."""

    db_url: str
    topics_dir: Path
    work_dir: Path
    token: str | None = None
    loopback: bool = True
    crawl_settings: dict[str, str] = field(default_factory=dict)
    #: environment of started crawls on top of the console's own (which they inherit)
    crawl_env: dict[str, str] = field(default_factory=dict)
    progress_interval: float = 5.0
    refresh_seconds: float = 2.0


# --- API models --------------------------------------------------------------------------


class StartCrawl(BaseModel):
    seeds: str = Field(description="seed URLs, separated by commas, spaces or new lines")
    topic: str = Field(description="a topic file of the topics directory, e.g. shizheng.toml")
    max_pages: int | None = Field(None, ge=1)
    max_depth: int | None = Field(None, ge=0)


class TopicEditBody(BaseModel):
    fields: dict[str, Any] = Field(default_factory=dict, description=f"any of {list(FIELDS)}")
    words: dict[str, Any] | None = Field(None, description="the whole [words] table")
    overrides: dict[str, Any] | None = Field(None, description="the whole [overrides] table")
    base_sha: str | None = Field(None, description="the version the edit was made from")

    def edit(self) -> TopicEdit:
        return TopicEdit(fields=self.fields, words=self.words, overrides=self.overrides)


class LabelBody(BaseModel):
    topic: str | None = Field(None, description="topic name (default: the run's topic)")
    scope: str = Field("page", description="page | section | host")
    target: str | None = Field(None, description="URL, section URL or host")
    run_id: int | None = None
    page_id: int | None = Field(None, description="label this page of run_id (or its "
                                "section/host)")  # fmt: skip
    label: bool


# --- middleware ----------------------------------------------------------------------------


class SafetyMiddleware(BaseHTTPMiddleware):
    """Token, Host and Origin checks, and JSON-only API writes."""

    def __init__(self, app: Any, config: ConsoleConfig):
        super().__init__(app)
        self.config = config

    async def dispatch(self, request: Request, call_next):
        cfg = self.config
        host = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]")
        if cfg.loopback and host not in LOOPBACK:
            return PlainTextResponse("unknown Host for a console bound to the loopback", 421)
        path = request.url.path
        if cfg.token and not path.startswith(("/static/", "/login")):
            given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            given = given or request.cookies.get(TOKEN_COOKIE, "")
            if not hmac.compare_digest(given.encode(), cfg.token.encode()):
                if request.method == "GET" and not path.startswith(("/api/", "/metrics")):
                    return RedirectResponse("/login?" + urlencode({"next": path}), 303)
                return JSONResponse({"detail": "a token is required (TOPICRAWL_CONSOLE_TOKEN)"},
                                    401)  # fmt: skip
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            origin = request.headers.get("origin")
            if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get(
                "host"
            ):
                return JSONResponse({"detail": "cross-site request refused"}, 403)
            if path.startswith("/api/") and request.method != "DELETE":
                ctype = request.headers.get("content-type", "").split(";")[0].strip()
                if ctype != "application/json":
                    return JSONResponse({"detail": "the API takes application/json"}, 415)
        response = await call_next(request)
        if CSRF_COOKIE not in request.cookies and "text/html" in response.headers.get(
            "content-type", ""
        ):
            token = getattr(request.state, "csrf", None) or secrets.token_urlsafe(24)
            response.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict")
        return response


def csrf_token(request: Request) -> str:
    """The CSRF token for this page's forms (the cookie's, or a new one set with it)."""
    token = request.cookies.get(CSRF_COOKIE)
    if not token:
        token = getattr(request.state, "csrf", None) or secrets.token_urlsafe(24)
        request.state.csrf = token
    return token


def check_csrf(request: Request, given: str) -> None:
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie or not hmac.compare_digest(cookie.encode(), (given or "").encode()):
        raise HTTPException(403, "CSRF token missing or wrong: reload the page")


# --- the app -------------------------------------------------------------------------------


def create_app(config: ConsoleConfig, *, store: Store | None = None) -> FastAPI:
    """The console for ``config`` (its database is migrated on open)."""
    store = store or Store.from_url(config.db_url)
    data = ConsoleData(store)
    labels = LabelStore(store)
    topics = TopicDirectory(config.topics_dir)
    explainer = PageExplainer(config.topics_dir)
    crawls = CrawlManager(
        config.db_url, config.work_dir, settings=config.crawl_settings,
        env=config.crawl_env, progress_interval=config.progress_interval,
    )  # fmt: skip

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        await run_in_threadpool(crawls.shutdown)

    app = FastAPI(
        title="topicrawl console",
        description="Start, watch, steer and audit focused crawls; edit topics; label pages.",
        version="1",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.config = config
    app.state.crawls = crawls
    app.state.data = data
    app.add_middleware(SafetyMiddleware, config=config)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    templates = Jinja2Templates(directory=HERE / "templates")
    templates.env.filters["pct"] = lambda x: "–" if x is None else f"{100 * x:.1f}%"
    templates.env.filters["num"] = lambda x: "–" if x is None else f"{x:.3f}"
    templates.env.filters["when"] = lambda d: d.strftime("%Y-%m-%d %H:%M:%S") if d else "–"

    def page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        ctx.update(request=request, csrf=csrf_token(request), token=bool(config.token))
        return templates.TemplateResponse(request, template, ctx, status_code=status)

    def run_or_404(run_id: int):
        run = data.get_run(run_id)
        if run is None:
            raise HTTPException(404, f"no run {run_id} in this database")
        return run

    def state(run: dict[str, Any]) -> str:
        managed = crawls.by_run(run["id"])
        if managed is not None and managed.running:
            return "stopping" if managed.stop_requests else "running"
        if run["finished_at"] is not None:
            return "finished"
        return "interrupted" if managed is not None else "unfinished"

    def runs_list() -> list[dict[str, Any]]:
        out = data.runs()
        for r in out:
            r["state"] = state(r)
        return out

    def run_summary(run_id: int) -> dict[str, Any]:
        run = run_or_404(run_id)
        row = next(iter(data.runs(run_id=run_id)), None) or {}
        managed = crawls.by_run(run_id)
        return {
            **row,
            "state": state(row) if row else "unknown",
            "settings": run.settings,
            "topic_text": run.topic_text,
            "stats": run.stats,
            "crawl": managed.as_dict() if managed else None,
        }

    def topic_files() -> list[dict[str, Any]]:
        return topics.list()

    def topic_path(name: str) -> Path:
        try:
            p = topics.path(name)
        except TopicFileError as exc:
            raise HTTPException(400, {"field": "topic", "message": str(exc)}) from None
        if not p.exists():
            raise HTTPException(404, f"no topic file {name!r} in the topics directory")
        return p

    def start(body: StartCrawl) -> dict[str, Any]:
        path = topic_path(body.topic)
        try:
            crawl = crawls.start(body.seeds, path, max_pages=body.max_pages,
                                 max_depth=body.max_depth)  # fmt: skip
        except CrawlStartError as exc:
            raise HTTPException(
                422, {"field": exc.field, "message": str(exc), "log": exc.log[-2000:]}
            ) from None
        return crawl.as_dict()

    def stop(run_id: int) -> dict[str, Any]:
        run_or_404(run_id)
        managed = crawls.by_run(run_id)
        if managed is None:
            raise HTTPException(409, f"run {run_id} was not started by this console")
        if not managed.running:
            raise HTTPException(409, f"run {run_id} is not running")
        crawls.stop(managed)
        return managed.as_dict()

    # -- HTML: runs -------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def runs_page(request: Request):
        return page(request, "runs.html", runs=runs_list(), topics=topic_files(), form={},
                    error=None)  # fmt: skip

    @app.post("/runs/start", include_in_schema=False)
    def runs_start_form(
        request: Request,
        csrf: Annotated[str, Form()] = "",
        seeds: Annotated[str, Form()] = "",
        topic: Annotated[str, Form()] = "",
        max_pages: Annotated[str, Form()] = "",
        max_depth: Annotated[str, Form()] = "",
    ):
        check_csrf(request, csrf)
        form = {"seeds": seeds, "topic": topic, "max_pages": max_pages, "max_depth": max_depth}
        try:
            body = StartCrawl(
                seeds=seeds, topic=topic,
                max_pages=int(max_pages) if max_pages.strip() else None,
                max_depth=int(max_depth) if max_depth.strip() else None,
            )  # fmt: skip
            crawl = start(body)
        except (ValueError, HTTPException) as exc:
            detail = exc.detail if isinstance(exc, HTTPException) else {"message": str(exc)}
            error = detail if isinstance(detail, dict) else {"message": str(detail)}
            return page(request, "runs.html", 422, runs=runs_list(), topics=topic_files(),
                        form=form, error=error)  # fmt: skip
        target = f"/runs/{crawl['run_id']}" if crawl["run_id"] else "/"
        return RedirectResponse(target, 303)

    @app.post("/runs/{run_id}/stop", include_in_schema=False)
    def runs_stop_form(request: Request, run_id: int, csrf: Annotated[str, Form()] = ""):
        check_csrf(request, csrf)
        stop(run_id)
        return RedirectResponse(f"/runs/{run_id}", 303)

    @app.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
    def run_page(request: Request, run_id: int):
        summary = run_summary(run_id)
        figures = data.figures(run_or_404(run_id))
        return page(request, "run.html", run=summary, fig=figures,
                    refresh=config.refresh_seconds)  # fmt: skip

    # -- HTML: pages ------------------------------------------------------------------------
    def page_filter(kind, host, min_score, max_score, q) -> PageFilter:
        if kind and kind not in KINDS:
            raise HTTPException(422, {"field": "kind", "message": f"kind must be one of "
                                      f"{', '.join(KINDS)}, not {kind!r}"})  # fmt: skip
        return PageFilter(kind=kind or None, host=host or None, min_score=min_score,
                          max_score=max_score, q=q or None)  # fmt: skip

    @app.get("/runs/{run_id}/pages", response_class=HTMLResponse, include_in_schema=False)
    def pages_page(
        request: Request,
        run_id: int,
        kind: str = "",
        host: str = "",
        min_score: Annotated[float | None, Query()] = None,
        max_score: Annotated[float | None, Query()] = None,
        q: str = "",
        after: int = 0,
    ):
        run = run_or_404(run_id)
        flt = page_filter(kind, host, min_score, max_score, q)
        result = data.pages(run, flt, after=after)
        params = {k: v for k, v in request.query_params.items() if k != "after" and v}
        next_url = None
        if result["next"] is not None:
            next_url = f"/runs/{run_id}/pages?" + urlencode({**params, "after": result["next"]})
        return page(request, "pages.html", run=run, result=result, flt=flt, kinds=KINDS,
                    next_url=next_url, first_url=f"/runs/{run_id}/pages?" + urlencode(params),
                    after=after)  # fmt: skip

    @app.get("/runs/{run_id}/pages/{page_id}", response_class=HTMLResponse,
             include_in_schema=False)  # fmt: skip
    def page_detail_page(request: Request, run_id: int, page_id: int):
        run = run_or_404(run_id)
        detail = data.page_detail(run, page_id)
        if detail is None:
            raise HTTPException(404, f"no page {page_id} in run {run_id}")
        current = labels.for_page(run.topic_name, detail["url"])
        return page(request, "page.html", run=run, p=detail, labels=current, scopes=SCOPES,
                    targets={s: label_target(s, detail["url"]) for s in SCOPES})  # fmt: skip

    @app.post("/runs/{run_id}/pages/{page_id}/label", include_in_schema=False)
    def label_form(
        request: Request,
        run_id: int,
        page_id: int,
        csrf: Annotated[str, Form()] = "",
        scope: Annotated[str, Form()] = "page",
        label: Annotated[str, Form()] = "",
    ):
        check_csrf(request, csrf)
        set_label(LabelBody(scope=scope, run_id=run_id, page_id=page_id,
                            label=label in ("1", "true", "relevant")))  # fmt: skip
        return RedirectResponse(f"/runs/{run_id}/pages/{page_id}#labels", 303)

    # -- HTML: labels and topics -------------------------------------------------------------
    @app.get("/labels", response_class=HTMLResponse, include_in_schema=False)
    def labels_page(request: Request, topic: str = ""):
        names = labels.topics()
        chosen = topic or (names[0] if names else "")
        runs = [r for r in data.runs() if r["topic"] == chosen]
        return page(request, "labels.html", topics=names, topic=chosen,
                    rows=labels.list(chosen) if chosen else [], runs=runs)  # fmt: skip

    @app.post("/labels/{label_id}/delete", include_in_schema=False)
    def label_delete_form(request: Request, label_id: int, csrf: Annotated[str, Form()] = "",
                          topic: Annotated[str, Form()] = ""):  # fmt: skip
        check_csrf(request, csrf)
        labels.delete(label_id)
        return RedirectResponse("/labels?" + urlencode({"topic": topic}), 303)

    @app.get("/topics", response_class=HTMLResponse, include_in_schema=False)
    def topics_page(request: Request):
        return page(request, "topics.html", files=topic_files(), root=str(topics.root))

    @app.get("/topics/{name}", response_class=HTMLResponse, include_in_schema=False)
    def topic_page(request: Request, name: str):
        topic_path(name)
        text = topics.read(name)
        try:
            values = form_values(topics.load(name), text)
            error = None
        except TopicFileError as exc:
            values, error = None, str(exc)
        return page(request, "topic.html", name=name, text=text, values=values, error=error,
                    sha=sha(text), fields=FIELDS)  # fmt: skip

    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_page(request: Request, next: str = "/"):
        return page(request, "login.html", next=next if next.startswith("/") else "/",
                    error=None)  # fmt: skip

    @app.post("/login", include_in_schema=False)
    def login(request: Request, csrf: Annotated[str, Form()] = "",
              token: Annotated[str, Form()] = "", next: Annotated[str, Form()] = "/"):  # fmt: skip
        check_csrf(request, csrf)
        if not config.token or not hmac.compare_digest(token.encode(), config.token.encode()):
            return page(request, "login.html", 401, next=next, error="wrong token")
        response = RedirectResponse(next if next.startswith("/") else "/", 303)
        response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
        return response

    @app.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request):
        return page(request, "api.html", spec=app.openapi())

    @app.get("/metrics", response_class=PlainTextResponse, tags=["metrics"])
    def metrics():
        """Prometheus text: pages, accepted, duplicates, errors, frontier per run."""
        return PlainTextResponse(
            metrics_text(data, crawls.running_runs),
            media_type="text/plain; version=0.0.4; charset=utf-8",
        )

    # -- API: runs ----------------------------------------------------------------------------
    @app.get("/api/runs", tags=["runs"])
    def api_runs() -> list[dict[str, Any]]:
        """Every run, newest first: topic, state, pages, accepted, harvest, duplicates."""
        return jsonable_encoder(runs_list())

    @app.post("/api/runs", tags=["runs"], status_code=201)
    def api_start(body: StartCrawl) -> dict[str, Any]:
        """Start a crawl (``scrapy crawl topic``) and return once it has its run id."""
        return jsonable_encoder(start(body))

    @app.get("/api/runs/{run_id}", tags=["runs"])
    def api_run(run_id: int) -> dict[str, Any]:
        """One run: its figures, settings, topic snapshot and final stats."""
        return jsonable_encoder(run_summary(run_id))

    @app.post("/api/runs/{run_id}/stop", tags=["runs"], status_code=202)
    def api_stop(run_id: int) -> dict[str, Any]:
        """Stop a crawl started by this console (SIGINT: graceful; again: forced)."""
        return jsonable_encoder(stop(run_id))

    @app.get("/api/runs/{run_id}/figures", tags=["runs"])
    def api_figures(run_id: int) -> dict[str, Any]:
        """The live figures: harvest (window, overall, timeline), speed, frontier, duplicates
        per method, links per reason, errors, hosts."""
        run = run_or_404(run_id)
        out = data.figures(run)
        row = next(iter(data.runs(run_id=run_id)), None)
        out["state"] = state(row) if row else "unknown"
        out["finished_at"] = row["finished_at"] if row else None
        out["finish_reason"] = row["finish_reason"] if row else None
        return jsonable_encoder(out)

    @app.get("/api/runs/{run_id}/pages", tags=["pages"])
    def api_pages(
        run_id: int,
        kind: Annotated[str, Query(description=f"one of {', '.join(KINDS)}")] = "",
        host: str = "",
        min_score: float | None = None,
        max_score: float | None = None,
        q: Annotated[str, Query(description="text in the URL, title or main text")] = "",
        after: Annotated[int, Query(ge=0, description="keyset: the last id of the "
                                    "previous page")] = 0,  # fmt: skip
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
    ) -> dict[str, Any]:
        """The run's pages in id order, filtered; ``next`` is the ``after`` of the next page."""
        run = run_or_404(run_id)
        return data.pages(run, page_filter(kind, host, min_score, max_score, q), after=after,
                          limit=limit)  # fmt: skip

    @app.get("/api/runs/{run_id}/pages/{page_id}", tags=["pages"])
    def api_page(run_id: int, page_id: int) -> dict[str, Any]:
        """A page and why it was accepted or dropped (link score, duplicate with a diff,
        cleaned text, raw HTML)."""
        run = run_or_404(run_id)
        detail = data.page_detail(run, page_id)
        if detail is None:
            raise HTTPException(404, f"no page {page_id} in run {run_id}")
        detail["labels"] = labels.for_page(run.topic_name, detail["url"])
        return jsonable_encoder(detail)

    @app.get("/api/runs/{run_id}/pages/{page_id}/explain", tags=["pages"])
    def api_explain(run_id: int, page_id: int) -> dict[str, Any]:
        """Relevance per part (formula 3, classifier probability, mix) under the run's topic
        snapshot."""
        run = run_or_404(run_id)
        detail = data.page_detail(run, page_id)
        if detail is None:
            raise HTTPException(404, f"no page {page_id} in run {run_id}")
        return explainer.explain(run.topic_text, detail)

    # -- API: topics ------------------------------------------------------------------------
    @app.get("/api/topics", tags=["topics"])
    def api_topics() -> list[dict[str, Any]]:
        """The topic files of the topics directory."""
        return topic_files()

    @app.get("/api/topics/{name}", tags=["topics"])
    def api_topic(name: str) -> dict[str, Any]:
        """A topic file: its text, version (sha) and form values."""
        topic_path(name)
        text = topics.read(name)
        try:
            values, error = form_values(topics.load(name), text), None
        except TopicFileError as exc:
            values, error = None, str(exc)
        return {"file": name, "text": text, "sha": sha(text), "values": values, "error": error}

    def edit_response(result, status_ok: int = 200) -> JSONResponse:
        body = {"ok": not result.errors, "errors": [e.as_dict() for e in result.errors],
                "diff": result.diff, "sha": sha(result.text)}  # fmt: skip
        return JSONResponse(body, status_ok if not result.errors else 422)

    @app.post("/api/topics/{name}/validate", tags=["topics"])
    def api_topic_validate(name: str, body: TopicEditBody) -> JSONResponse:
        """Apply an edit without saving: problems per field (as `topic validate`) and the
        diff."""
        topic_path(name)
        return edit_response(topics.apply(name, body.edit()))

    @app.put("/api/topics/{name}", tags=["topics"])
    def api_topic_save(name: str, body: TopicEditBody) -> JSONResponse:
        """Save an edit (comments and layout kept); 422 with the field and the problem and
        the file unchanged when it is invalid, or when the file changed since base_sha."""
        topic_path(name)
        return edit_response(topics.save(name, body.edit(), body.base_sha))

    @app.get("/api/topics/{name}/suggest", tags=["topics"])
    def api_topic_suggest(
        name: str, topn: Annotated[int, Query(ge=1, le=200)] = 20
    ) -> list[dict[str, Any]]:
        """New topic words with scores (as `topicrawl topic suggest`)."""
        topic_path(name)
        try:
            return explainer.suggest(topics.load(name), topn=topn)
        except TopicFileError as exc:
            raise HTTPException(422, {"field": "file", "message": str(exc)}) from None

    # -- API: labels ------------------------------------------------------------------------
    def set_label(body: LabelBody) -> dict[str, Any]:
        topic, target = body.topic, body.target
        if body.page_id is not None:
            if body.run_id is None:
                raise HTTPException(422, {"field": "run_id", "message": "page_id needs run_id"})
            run = run_or_404(body.run_id)
            detail = data.page_detail(run, body.page_id)
            if detail is None:
                raise HTTPException(404, f"no page {body.page_id} in run {body.run_id}")
            topic = topic or run.topic_name
            try:
                target = label_target(body.scope, detail["url"])
            except LabelError as exc:
                raise HTTPException(422, {"field": "scope", "message": str(exc)}) from None
        elif body.run_id is not None and not topic:
            topic = run_or_404(body.run_id).topic_name
        if not topic:
            raise HTTPException(422, {"field": "topic", "message": "give topic or run_id"})
        try:
            return labels.set(topic, body.scope, target or "", body.label, body.run_id)
        except LabelError as exc:
            raise HTTPException(422, {"field": "label", "message": str(exc)}) from None

    @app.get("/api/labels", tags=["labels"])
    def api_labels(topic: str | None = None) -> list[dict[str, Any]]:
        """Labels, of one topic or all."""
        return labels.list(topic)

    @app.post("/api/labels", tags=["labels"], status_code=201)
    def api_label(body: LabelBody) -> dict[str, Any]:
        """Label a page, section or host relevant (true) or not for a topic."""
        return set_label(body)

    @app.delete("/api/labels/{label_id}", tags=["labels"], status_code=204)
    def api_label_delete(label_id: int) -> None:
        if not labels.delete(label_id):
            raise HTTPException(404, f"no label {label_id}")

    @app.get("/api/labels.tsv", tags=["labels"], response_class=PlainTextResponse)
    def api_labels_tsv(topic: str, run: int | None = None) -> PlainTextResponse:
        """``url<TAB>1|0`` for ``topicrawl topic tune --labels``; with ``run``, the run's
        pages under labelled sections and hosts too."""
        if run is not None:
            run_or_404(run)
        return PlainTextResponse(
            labels.tsv(topic, run),
            media_type="text/tab-separated-values; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="labels-run{run or "all"}.tsv"'},
        )

    return app
