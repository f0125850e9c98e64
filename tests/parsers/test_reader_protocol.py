"""Every discovered reader module provides the :class:`parsers.reader.Reader` interface."""

import inspect

from profdiff.parsers.detect import readers
from profdiff.parsers.reader import Reader


def test_every_reader_follows_the_protocol():
    found = readers()
    assert len(found) >= 10
    for fmt, mod in found.items():
        assert isinstance(mod, Reader), mod.__name__
        assert mod.FORMAT == fmt and mod.DESCRIPTION.strip()
        params = inspect.signature(mod.read).parameters
        assert "lenient" in params and "progress" in params, mod.__name__
        assert params["lenient"].kind is inspect.Parameter.KEYWORD_ONLY, mod.__name__
        assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()), \
            f"{mod.__name__}.read must accept (and ignore) unknown reader options"
