from . import choice, numeric, text  # noqa: F401  (registers choice, choice_set, numeric, exact, regex)
from . import code  # noqa: F401,E402  (registers code)
from . import judge, pairwise  # noqa: F401,E402  (registers judge, pairwise_judge)
