"""Rules versions over time: :mod:`kb.versions.catalog` (which versions are stored, names → versions),
:mod:`kb.versions.diff` (what changed between two versions), :mod:`kb.versions.history` (one rule across every
version) and :mod:`kb.versions.current` (the rules shown, and how current each Japanese text is). Bringing the
knowledge base and the site up to date uses them: :mod:`kb.update`.
"""
