"""Everything the site says, in one place; the models check it when it loads (an empty field or a
malformed URL stops the build)."""
