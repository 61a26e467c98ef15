from . import choice, numeric, text  # noqa: F401  (registers choice, choice_set, numeric, exact, regex)
