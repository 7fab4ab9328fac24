"""What the fixtures of this suite did, in order: each test returns that very list, which its own teardown then
appends to, so its record must show what was set up and torn down before it returned, and nothing after."""
import pytest

EVENTS = []


def _fixture(name):
    EVENTS.append(f"setup {name}")
    yield name
    EVENTS.append(f"teardown {name}")


@pytest.fixture(scope="module")
def module_resource(request):
    yield from _fixture(request.module.__name__)


@pytest.fixture
def events():
    return EVENTS


@pytest.fixture
def per_test(request):
    yield from _fixture(request.node.name)
