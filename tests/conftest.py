import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import ABSENT, SHARED  # noqa: E402,F401
from loopback import Platform  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def run_script(script, *args, env=None):
    """Run one of the two scripts as a user would; returns the CompletedProcess."""
    full_env = dict(os.environ)
    full_env.pop("DAISHI_BASE", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, str(REPO / script)] + [str(a) for a in args],
        capture_output=True, text=True, env=full_env, timeout=120,
    )


@pytest.fixture(scope="session")
def conformance():
    if not SHARED.is_dir():
        pytest.skip(ABSENT)
    return SHARED


@pytest.fixture(scope="session")
def fixtures_platform():
    with Platform(FIXTURES) as p:
        yield p


@pytest.fixture(scope="session")
def conformance_platform(conformance):
    with Platform(conformance) as p:
        yield p


def load_script(name):
    """Import one of the scripts as a module, for its functions."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, REPO / (name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
