"""The one exception type the kit shows to users as a message, not a traceback."""


class KitError(Exception):
    """A problem the user can act on: the message names the thing and where to look."""
