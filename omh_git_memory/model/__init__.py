"""The note model: what a note, a key and the settings are; errors; fault points."""
