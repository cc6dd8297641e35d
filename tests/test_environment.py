"""environment.yml (for conda readers) must agree with pyproject.toml and the Makefile.

conda cannot run here, so the file is checked by parsing: the Python version, the pinned torch,
and every dependency and extra of pyproject (either through ``-e .[extras]`` or listed by name
with a compatible version spec).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def env() -> dict:
    data = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert isinstance(data, dict), "environment.yml must be a mapping"
    return data


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def conda_entries(env: dict) -> list[str]:
    return [d for d in env["dependencies"] if isinstance(d, str)]


def pip_entries(env: dict) -> list[str]:
    sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "environment.yml needs exactly one pip: section"
    return [p for p in sections[0] if not p.startswith("--")]


def conda_spec(entry: str) -> tuple[str, SpecifierSet]:
    """'numpy>=1.24' / 'python=3.11' / 'scipy' -> (name, pip-style specifier)."""
    m = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", entry.strip())
    assert m, f"cannot read conda spec {entry!r}"
    name, spec = m.groups()
    spec = spec.strip()
    if spec.startswith("=") and not spec.startswith("=="):
        spec = f"=={spec[1:]}" + ("" if spec.count(".") >= 2 or spec.endswith("*") else ".*")
    return canonicalize_name(name), SpecifierSet(spec)


def compatible(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Some version satisfies both (checked on the versions the specs mention, and neighbours)."""
    candidates = set()
    for spec in [*a, *b]:
        v = Version(spec.version.replace(".*", ""))
        rel = list(v.release) + [0] * (3 - len(v.release))
        candidates |= {v, Version(".".join(map(str, rel[:2] + [rel[2] + 1]))),
                       Version(".".join(map(str, [rel[0], rel[1] + 1, 0]))), Version(f"{rel[0] + 1}.0.0")}
    if not candidates:
        return True
    return any(v in a and v in b for v in candidates)


def test_compatible_helper_can_fail():
    assert compatible(SpecifierSet(">=1.24"), SpecifierSet("==1.26.4"))
    assert not compatible(SpecifierSet(">=2.0"), SpecifierSet("<1.5"))
    assert not compatible(SpecifierSet("==4.3.0"), SpecifierSet("==4.4.0"))
    assert conda_spec("python=3.11") == ("python", SpecifierSet("==3.11.*"))


def test_basic_shape(env):
    assert env.get("name")
    assert env.get("channels")
    names = [conda_spec(e)[0] for e in conda_entries(env)]
    assert "python" in names and "pip" in names


def test_python_version_is_allowed_by_pyproject(env, pyproject):
    python = [spec for name, spec in map(conda_spec, conda_entries(env)) if name == "python"][0]
    requires = SpecifierSet(pyproject["project"]["requires-python"])
    assert compatible(python, requires), f"python {python} does not meet requires-python {requires}"


def test_torch_is_pinned_first_to_the_makefile_version(env, pyproject):
    first = Requirement(pip_entries(env)[0])
    assert canonicalize_name(first.name) == "torch", "torch must be the first pip entry"
    make = re.search(r"^TORCH_VERSION\s*:?=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M)
    assert make, "Makefile defines no TORCH_VERSION"
    assert str(first.specifier) == f"=={make.group(1)}"
    torch_req = next(Requirement(r) for r in pyproject["project"]["dependencies"] if r.startswith("torch"))
    assert Version(make.group(1)) in torch_req.specifier


def test_every_pyproject_dependency_and_extra_is_covered(env, pyproject):
    project = pyproject["project"]
    extras = project.get("optional-dependencies", {})
    editable = [p for p in pip_entries(env) if re.match(r"^-e\s+\.(\[|$)", p)]
    listed: dict[str, SpecifierSet] = {}
    for name, spec in map(conda_spec, conda_entries(env)):
        listed[name] = spec
    for p in pip_entries(env):
        if not p.startswith("-e"):
            r = Requirement(p)
            listed[canonicalize_name(r.name)] = r.specifier
    # whatever is listed explicitly must not contradict pyproject
    for req in [*project["dependencies"], *(r for rs in extras.values() for r in rs)]:
        r = Requirement(req)
        name = canonicalize_name(r.name)
        if name in listed:
            assert compatible(listed[name], r.specifier), f"{name}: environment.yml says {listed[name]}, pyproject {r.specifier}"
    if editable:
        m = re.match(r"^-e\s+\.\[([^\]]*)\]$", editable[0])
        named = {e.strip() for e in m.group(1).split(",")} if m else set()
        assert named == set(extras), f"-e .[...] installs extras {sorted(named)}; pyproject has {sorted(extras)}"
    else:  # a mirrored list must name every requirement
        for req in [*project["dependencies"], *(r for rs in extras.values() for r in rs)]:
            assert canonicalize_name(Requirement(req).name) in listed, f"{req} is missing from environment.yml"
