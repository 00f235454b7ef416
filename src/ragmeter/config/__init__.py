"""What users configure beside :class:`~ragmeter.settings.Settings`: their own criteria
(:mod:`.criteria`), read from TOML or built in Python, checked where they are made."""
