"""Guided lessons: the lesson format's loader (``loader``), its records (``model``),
checking exercises by execution (``check``), the learner's progress (``progress``),
the linter (``lint``) and the plain-terminal flow (``plain``). The lessons themselves
live in the repository's ``lessons/`` folder (``lessons/README.md`` is the format)."""
