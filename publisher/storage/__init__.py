"""The storage layer: every table and every SQL statement of the site; callers import its modules."""
