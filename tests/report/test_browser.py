"""The report in a real headless Chromium: no script from the data runs, plots render.

Needs the Debian package ``chromium`` (``apt-get install -y chromium``); skipped without it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from ragmeter.report.html import write_report

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium not found on PATH: install the Debian package with "
    "'apt-get install -y chromium' to run the browser test of the HTML report",
)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
)


def chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    profile.mkdir(parents=True, exist_ok=True)
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def dump_dom(page: Path, profile: Path) -> str:
    return chromium(page, profile, "--dump-dom").stdout


def script_ran(dom: str) -> list[str]:
    """Evidence that a script from the data ran in the dumped DOM."""
    found = []
    if "XSS-RAN" in dom:
        found.append("document.write ran")
    title = re.search(r"<title>(.*?)</title>", dom, flags=re.DOTALL)
    if title and "PWNED" in title.group(1):
        found.append("document.title changed")
    if re.search(r"<body[^>]*data-pwned", dom):
        found.append("onerror handler ran")
    return found


@pytest.fixture(scope="module")
def report(rd, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    results = rd.write_run(folder / "out.jsonl", rd.make_rows(), rd.make_info())
    return write_report(results, folder / "report.html", group_by="metadata.category")


def test_the_detector_sees_a_script_that_runs(tmp_path):
    """Control: in this Chromium setup a page script does run and is caught."""
    page = tmp_path / "control.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>t</title></head><body>"
        "<script>document.title='PW'+'NED';document.write('XSS'+'-RAN')</script>"
        "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"></body></html>"
    )
    dom = dump_dom(page, tmp_path / "profile")
    assert script_ran(dom) == [
        "document.write ran",
        "document.title changed",
        "onerror handler ran",
    ]


def test_no_script_from_the_data_runs_and_text_shows_escaped(report, rd, tmp_path):
    dom = dump_dom(report, tmp_path / "profile")
    assert script_ran(dom) == []
    assert "<title>ragmeter report: out.jsonl</title>" in dom
    # The hostile text is present, as text.
    assert "&lt;script&gt;document.title='PW'+'NED'" in dom
    assert "claim A0 &lt;img src=x onerror=" in dom
    assert "&lt;i&gt;cat-a&lt;/i&gt;" in dom
    assert rd.SECRET not in dom


def test_escaping_alone_stops_scripts_without_the_csp(report, tmp_path):
    """Remove the page's Content-Security-Policy: escaping must still keep scripts inert."""
    page = tmp_path / "no-csp.html"
    text = report.read_text(encoding="utf-8")
    stripped = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    assert stripped != text
    page.write_text(stripped, encoding="utf-8")
    assert script_ran(dump_dom(page, tmp_path / "profile")) == []


def test_plots_render_as_svg_with_paths(report, tmp_path):
    dom = dump_dom(report, tmp_path / "profile")
    svgs = re.findall(r'<svg class="pl".*?</svg>', dom, flags=re.DOTALL)
    assert len(svgs) == 6  # 3 metrics, and 3 grouped by category
    sparks = re.findall(r'<svg class="sp".*?</svg>', dom, flags=re.DOTALL)
    assert len(sparks) == 3 and all("<path" in svg for svg in sparks)  # the overview's
    for svg in svgs:
        assert len(re.findall(r"<path\b", svg)) >= 4  # axes, boxes, bars
        assert re.search(r'viewBox="0 0 [\d.]+ [\d.]+"', svg)
        assert "<text" in svg and "style=" not in svg  # styled by the page's stylesheet


def test_screenshot_is_a_non_trivial_png(report, tmp_path):
    shot = tmp_path / "shot.png"
    chromium(report, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2000")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000

    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (2000, 1280)
    # Not a blank page: many distinct colours (text, tables, plot bars).
    flat = (pixels[..., :3] * 255).astype("uint8").reshape(-1, 3)
    assert len({tuple(p) for p in flat[::97]}) > 20
    assert flat.std() > 10
    # The histogram bars take the stylesheet's colour (#2b7a78): the shared styles apply.
    teal = (abs(flat.astype(int) - (0x2B, 0x7A, 0x78)).sum(axis=1) < 12).sum()
    assert teal > 2000


def test_the_table_of_rows_sorts_and_filters_by_css_alone(rd, tmp_path):
    """Issue 37, item 2: the report runs no script, yet its table of rows sorts by a score and
    filters to a kind of row. The test checks a sort and a filter radio as a click would (the
    page's own markup, ``checked`` moved), then reads the rows' positions on screen with a
    script of its own added to a copy without the CSP."""
    results = rd.write_run(tmp_path / "out.jsonl", rd.make_rows(), rd.make_info())
    text = write_report(results, tmp_path / "r.html").read_text(encoding="utf-8")
    column = re.findall(r'<th class=s title="([^":]+):', text).index("faithfulness")
    text = text.replace("id=rs-i checked", "id=rs-i").replace(
        f"id=rs{column}d aria-label", f"id=rs{column}d checked aria-label"
    )
    text = text.replace("id=rf-all checked", "id=rf-all")
    text = text.replace("id=rf-x aria-label", "id=rf-x checked aria-label")  # unscored rows
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    probe = (
        "<script>document.title=[...document.querySelectorAll('.rt tbody tr')]"
        ".filter(r=>r.offsetParent!==null).sort((a,b)=>a.getBoundingClientRect().top-"
        "b.getBoundingClientRect().top).map(r=>r.id).join(' ')</script>"
    )
    page = tmp_path / "probe.html"
    page.write_text(text.replace("</body>", probe + "</body>"), encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", dump_dom(page, tmp_path / "profile")).group(1)
    # context_precision is undefined on rows 0, 5 and 10: those are the unscored rows; by
    # faithfulness (row / 11), highest first
    assert title.split() == ["row-10", "row-5", "row-0"]
