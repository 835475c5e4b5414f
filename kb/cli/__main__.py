"""``python -m kb.cli``: the ``kb`` command."""

from kb.cli import main

main()
