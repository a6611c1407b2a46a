"""When a note expires: the triggers it names and their evaluation against git."""
