"""A conftest that fails to import: the tests under it are its error, the rest of the run goes on."""
import no_such_module_for_parity  # noqa: F401
