"""A test double: a site of small pages that exercise the browser layer (forms, iframes, popups,
a link off the sites, a late request). It stands in for a real site where a test measures the
browser layer, not a site; tests/web/conftest.py registers it as ``testbed``."""

import asyncio
import html

from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Route

from agentgym.envs.web.sites.base import Site


def page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(
        f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"
    )


FORM = """
<h1>Sign up</h1>
<nav><a href="/testbed/frames">Frames</a> <a href="/testbed/away">Away</a></nav>
<form method="post" action="/testbed/save">
  <label for="name">Name</label> <input id="name" name="name">
  <label for="color">Color</label>
  <select id="color" name="color">
    <option value="r">Red</option><option value="g">Green</option>
  </select>
  <label><input type="checkbox" name="agree" value="1"> I agree</label>
  <button type="submit">Save</button>
</form>
<p>Saved so far: {count}</p>
"""


class TestbedSite(Site):
    __test__ = False  # a test double, not a test class

    name = "testbed"
    title = "Testbed"

    def build(self, db, seed):
        db.execute("CREATE TABLE entries (name TEXT, color TEXT, agree INTEGER)")
        db.execute("CREATE TABLE meta (seed INTEGER)")
        db.execute("INSERT INTO meta VALUES (?)", (seed,))

    def routes(self):
        return [
            Route("/", self.form),
            Route("/save", self.save, methods=["POST"]),
            Route("/done", self.done),
            Route("/frames", self.frames),
            Route("/inner", self.inner),
            Route("/away", self.away),
            Route("/popup", self.popup),
            Route("/late", self.late),
            Route("/late-data", self.late_data),
            Route("/long", self.long),
        ]

    def form(self, request):
        (count,) = request.state.db.execute("SELECT COUNT(*) FROM entries").fetchone()
        return page("Sign up", FORM.format(count=count))

    async def save(self, request):
        form = await request.form()
        db = request.state.db
        db.execute(
            "INSERT INTO entries VALUES (?, ?, ?)",
            (form.get("name", ""), form.get("color", ""), int(form.get("agree", 0) or 0)),
        )
        db.commit()
        return RedirectResponse("/testbed/done", status_code=303)

    def done(self, request):
        row = request.state.db.execute("SELECT name FROM entries ORDER BY rowid DESC").fetchone()
        return page("Saved", f"<p>Saved: {html.escape(row[0])}</p><a href='/testbed/'>Back</a>")

    def frames(self, request):
        return page(
            "Frames",
            "<h1>Outer</h1><iframe title='inner' src='/testbed/inner'></iframe>",
        )

    def inner(self, request):
        return page(
            "Inner",
            "<button onclick=\"document.getElementById('out').textContent='pressed'\">"
            "Press</button>"
            "<span id='out'>waiting</span>",
        )

    def away(self, request):
        return page(
            "Away",
            "<a href='http://example.com/'>Elsewhere</a> <a href='/'>Server index</a>"
            " <a href='/testbed/'>Home</a>",
        )

    def popup(self, request):
        return page("Popup", "<a href='/testbed/' target='_blank'>Open in a new tab</a>")

    def late(self, request):
        return page(
            "Late",
            "<button onclick=\"fetch('/testbed/late-data').then(r => r.json())"
            ".then(d => { document.getElementById('out').textContent = d.text })\">Load</button>"
            "<span id='out'>empty</span>",
        )

    def long(self, request):
        lines = "".join(f"<p style='height: 100px'>Line {i}</p>" for i in range(50))
        return page("Long", f"<div id='box' style='height: 200px; overflow: auto'>{lines}</div>")

    async def late_data(self, request):
        await asyncio.sleep(0.3)
        return JSONResponse({"text": "arrived"})


# ---------------------------------------------------------------- a task and env over it

from agentgym.core import GeneratedTaskSet, Verdict  # noqa: E402
from agentgym.envs.web.actions import format_action  # noqa: E402
from agentgym.envs.web.base import WebEnv, WebTask  # noqa: E402

NAMES = ("Ada", "Grace", "Alan", "Edsger", "Barbara")


class SignUpTask(WebTask):
    """Sign up under a name drawn from the seed, choosing Green and agreeing."""

    start_path = "/testbed/"

    def __init__(self, *args):
        super().__init__(*args)
        self.sites = {"testbed": self.seed % 3}
        self.name = NAMES[self.seed % len(NAMES)]

    def goal(self):
        return f"Sign up as {self.name}, choosing the color Green and agreeing to the terms."

    def validate(self, world):
        db = world.db("testbed")
        try:
            rows = db.execute("SELECT name, color, agree FROM entries").fetchall()
        finally:
            db.close()
        ok = any(tuple(r) == (self.name, "g", 1) for r in rows)
        return Verdict(float(ok), ok, details=f"entries: {[tuple(r) for r in rows]}")

    def solve(self, world):
        snap = world.snapshot
        if world.path.startswith("/testbed/done"):
            return None
        box = snap.find("textbox", "Name")
        if box.value != self.name:
            return format_action("fill", box.id, self.name)
        color = snap.find("combobox", "Color")
        if color.value != "Green":
            return format_action("select", color.id, "Green")
        agree = snap.find("checkbox", contains="agree")
        if not agree.checked:
            return format_action("check", agree.id)
        return format_action("click", snap.find("button", "Save").id)


class TestbedEnv(WebEnv):
    __test__ = False  # a test double, not a test class

    """A test double env: sign up on the testbed site."""

    def __init__(self, **kwargs):
        self.tasks = GeneratedTaskSet(
            "web-testbed", SignUpTask, ("easy",), sizes={"train": 50, "dev": 5, "test": 5}
        )
        super().__init__(**kwargs)
